package store

import (
	"context"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	carillonv1 "github.com/carillonhq/carillon/proto/carillon/v1"
)

// TestWatchedRuns: RunStore.Watched walks, a page at a time and through
// runs_active, the running runs dispatched before the cutoff to executors
// of AUTO groups of Carillon executors, oldest dispatch first; runs of
// MANUAL or XXL_JOB groups, not dispatched yet, dispatched since the
// cutoff, or settled are not in it.
func TestWatchedRuns(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, err := Open(ctx, filepath.Join(t.TempDir(), "carillon.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()

	if text := queryPlan(t, s, watchedRunsSQL); !strings.Contains(text, "USING INDEX runs_active") {
		t.Errorf("plan %q, want it read through runs_active", text)
	}

	t0 := time.Date(2026, 11, 23, 8, 0, 0, 0, time.UTC)
	group := func(app string, mode carillonv1.AddressMode, proto carillonv1.ExecutorProtocol) int64 {
		g, err := s.Groups.Create(ctx, Group{AppName: app, Title: app, AddressMode: mode, ExecutorProtocol: proto}, t0)
		if err != nil {
			t.Fatal(err)
		}
		return g.ID
	}
	auto := group("auto", carillonv1.AddressMode_ADDRESS_MODE_AUTO, carillonv1.ExecutorProtocol_EXECUTOR_PROTOCOL_CARILLON)
	manual := group("manual", carillonv1.AddressMode_ADDRESS_MODE_MANUAL, carillonv1.ExecutorProtocol_EXECUTOR_PROTOCOL_CARILLON)
	xxl := group("xxl", carillonv1.AddressMode_ADDRESS_MODE_AUTO, carillonv1.ExecutorProtocol_EXECUTOR_PROTOCOL_XXL_JOB)
	var runs []Run
	add := func(groupID int64, triggered time.Time, addr string, status carillonv1.RunStatus) {
		j, err := s.Jobs.Create(ctx, Job{GroupID: groupID, Description: "j", Handler: "h",
			ScheduleType: carillonv1.ScheduleType_SCHEDULE_TYPE_NONE}, t0)
		if err != nil {
			t.Fatal(err)
		}
		runs = append(runs, Run{JobID: j.ID, GroupID: groupID, ScheduledAt: triggered, TriggeredAt: triggered, ExecutorAddress: addr,
			Status: status, ShardTotal: 1, TriggerType: carillonv1.TriggerType_TRIGGER_TYPE_MANUAL})
	}
	running := carillonv1.RunStatus_RUN_STATUS_RUNNING
	for i := range 5 { // two of them on one instant
		add(auto, t0.Add(time.Duration(min(i, 3))*time.Second), "http://e:1", running)
	}
	add(auto, t0, "", running)                                             // not dispatched yet
	add(auto, t0.Add(time.Minute), "http://e:1", running)                  // since the cutoff
	add(auto, t0, "http://e:1", carillonv1.RunStatus_RUN_STATUS_SUCCEEDED) // settled
	add(manual, t0, "http://m:1", running)
	add(xxl, t0, "http://x:1", running)
	inserted, err := s.Runs.Insert(ctx, runs)
	if err != nil {
		t.Fatal(err)
	}
	var want []int64
	for _, r := range inserted[:5] {
		want = append(want, r.ID)
	}

	var got []int64
	var cursor RunsCursor
	for page := 0; ; page++ {
		rs, err := s.Runs.Watched(ctx, t0.Add(30*time.Second), cursor, 2)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range rs {
			got = append(got, r.ID)
		}
		if len(rs) < 2 {
			break
		}
		if page > 10 {
			t.Fatal("the walk does not end")
		}
		cursor = RunsCursor{TriggeredAt: rs[len(rs)-1].TriggeredAt, ID: rs[len(rs)-1].ID}
	}
	if !slices.Equal(got, want) {
		t.Errorf("WatchedRuns, two at a time: runs %v, want %v", got, want)
	}
}
