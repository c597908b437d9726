package report

import (
	"encoding/json"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	carillonv1 "github.com/carillonhq/carillon/proto/carillon/v1"
)

// FuzzSpoolLine: decoding a spool line never panics, and what decodes as a
// result reads back the same once written again; a result written reads
// back as it was, whatever its database id and message hold. The seeds are
// lines as the spool writes them.
func FuzzSpoolLine(f *testing.F) {
	at := time.Date(2026, 11, 23, 8, 0, 0, 123456789, time.UTC)
	for _, r := range []Result{
		{RunID: 1, Status: carillonv1.RunStatus_RUN_STATUS_SUCCEEDED, FinishedAt: at, StartedAt: at.Add(-time.Second)},
		{RunID: 42, DatabaseID: "0123456789abcdef0123456789abcdef", Status: carillonv1.RunStatus_RUN_STATUS_FAILED, Message: "boom: exit status 1", FinishedAt: at},
		{RunID: 3, Status: carillonv1.RunStatus_RUN_STATUS_SUCCEEDED, FinishedAt: at, Outputs: map[string]string{"rows": "42", "path": "s3://b/<&>\n"}},
		{RunID: 7, DatabaseID: "odd \"id\" <&>", Status: carillonv1.RunStatus_RUN_STATUS_KILLED, Message: "say \"hi\"\n\tü", FinishedAt: at.In(time.FixedZone("x", 3600))},
	} {
		f.Add(appendResultLine(nil, r), r.RunID, r.DatabaseID, r.Message, at.UnixNano())
	}
	f.Add([]byte(`{"ack":[41,42]}`+"\n"), int64(3), "", "", int64(0))
	f.Add([]byte(`{"database_id":"9f0c","ack":[42]}`+"\n"), int64(1), "9f0c", "\xff", int64(-1))
	f.Add([]byte(`{"run_id":1,"status":"RUN_STAT`), int64(1), "", "", int64(1)) // torn by a crash
	f.Fuzz(func(t *testing.T, line []byte, runID int64, db, msg string, finished int64) {
		// What the spool reads back from disk, written again, reads the same.
		var sp spooled
		if json.Unmarshal(line, &sp) == nil && sp.Ack == nil {
			if r, err := sp.result(); err == nil {
				if again := decodeSpoolLine(t, appendResultLine(nil, r)); !sameResult(again, r) {
					t.Errorf("%q read back %+v, written again and read %+v", line, r, again)
				}
			}
		}
		// A result the executor makes reads back as it was.
		if runID <= 0 {
			return
		}
		r := NewResult(runID, carillonv1.RunStatus_RUN_STATUS_FAILED, msg, time.Unix(0, finished))
		r.DatabaseID = strings.ToValidUTF8(db, "\uFFFD") // it comes from a protobuf string: valid UTF-8
		if db != "" {
			r.Outputs = map[string]string{r.DatabaseID: r.Message} // SetOutput takes valid UTF-8 only
		}
		if got := decodeSpoolLine(t, appendResultLine(nil, r)); !sameResult(got, r) {
			t.Errorf("result %+v read back as %+v", r, got)
		}
	})
}

// decodeSpoolLine decodes a result line as the spool reads it.
func decodeSpoolLine(t *testing.T, line []byte) Result {
	t.Helper()
	var sp spooled
	if err := json.Unmarshal(line, &sp); err != nil {
		t.Fatalf("line %q does not decode: %v", line, err)
	}
	r, err := sp.result()
	if err != nil {
		t.Fatalf("line %q is no result: %v", line, err)
	}
	return r
}

// sameResult says whether a and b are the same result, their times the
// same instants.
func sameResult(a, b Result) bool {
	return a.RunID == b.RunID && a.DatabaseID == b.DatabaseID && a.Status == b.Status && a.Message == b.Message &&
		a.FinishedAt.Equal(b.FinishedAt) && a.StartedAt.Equal(b.StartedAt) && maps.Equal(a.Outputs, b.Outputs)
}

// sameResults says whether a and b are the same results in the same order
// (sameResult).
func sameResults(a, b []Result) bool { return slices.EqualFunc(a, b, sameResult) }
