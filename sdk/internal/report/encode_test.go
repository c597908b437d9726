package report

import (
	"encoding/json"
	"testing"
	"time"

	carillonv1 "github.com/carillonhq/carillon/proto/carillon/v1"
)

// TestAppendResultLine: the hand-written spool line is what encoding/json
// writes for the same result, whatever its message holds.
func TestAppendResultLine(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 11, 23, 8, 0, 0, 123456789, time.UTC)
	for _, r := range []Result{
		{RunID: 1, Status: carillonv1.RunStatus_RUN_STATUS_SUCCEEDED, FinishedAt: at},
		{RunID: 2, Status: carillonv1.RunStatus_RUN_STATUS_FAILED, Message: "boom: exit status 1", FinishedAt: at.In(time.FixedZone("x", 3600))},
		{RunID: 3, Status: carillonv1.RunStatus_RUN_STATUS_FAILED, Message: "say \"hi\"\n\tback\\slash <b>&</b> ünï \xff"},
		{RunID: 4, Status: carillonv1.RunStatus_RUN_STATUS_KILLED, FinishedAt: time.Date(2026, 1, 2, 3, 4, 5, 0, time.Local)},
		{RunID: 5, DatabaseID: "0123456789abcdef0123456789abcdef", Status: carillonv1.RunStatus_RUN_STATUS_SUCCEEDED, FinishedAt: at},
		{RunID: 6, DatabaseID: "odd \"id\" <&>", Status: carillonv1.RunStatus_RUN_STATUS_FAILED, Message: "m"},
		{RunID: 7, Status: carillonv1.RunStatus_RUN_STATUS_SUCCEEDED, FinishedAt: at, StartedAt: at.Add(-time.Second)},
	} {
		want, err := json.Marshal(spooled{RunID: r.RunID, DatabaseID: r.DatabaseID, Status: r.Status.String(), Message: r.Message,
			FinishedAt: r.FinishedAt, StartedAt: r.StartedAt})
		if err != nil {
			t.Fatal(err)
		}
		if got := string(appendResultLine(nil, r)); got != string(want)+"\n" {
			t.Errorf("run %d:\n got %s\nwant %s", r.RunID, got, want)
		}
	}
}
