package admin_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	carillonv1 "github.com/carillonhq/carillon/proto/carillon/v1"
)

// TestPauseGroup pauses the group of an every-second job through the real
// admin and a real SDK executor: while paused the job runs nothing (a
// fire claimed before the pause is dropped, not sent), the pause is
// recorded as one SKIPPED run standing for its instants, and the resume
// fires the job again from its next instant.
func TestPauseGroup(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	a := startAdmin(t)
	c := newClients(a.URL, http.DefaultClient)
	g, err := c.group.CreateGroup(ctx, &carillonv1.CreateGroupRequest{Group: &carillonv1.Group{AppName: "pausing"}})
	if err != nil {
		t.Fatal(err)
	}
	startExecutor(t, a.URL, "pausing")
	job := createJob(t, c, &carillonv1.Job{GroupId: g.Group.Id, Description: "every second", Handler: "ok", Enabled: true,
		Schedule: &carillonv1.Schedule{Type: carillonv1.ScheduleType_SCHEDULE_TYPE_FIX_RATE, IntervalSeconds: 1}})
	runs := func() []*carillonv1.Run {
		t.Helper()
		res, err := c.run.ListRuns(ctx, &carillonv1.ListRunsRequest{JobId: job.Id, PageSize: 500})
		if err != nil {
			t.Fatal(err)
		}
		return res.Runs
	}
	succeededAfter := func(after time.Time) error {
		for _, r := range runs() {
			if r.Status == carillonv1.RunStatus_RUN_STATUS_SUCCEEDED && r.ScheduledAt.AsTime().After(after) {
				return nil
			}
		}
		return fmt.Errorf("no run scheduled after %v succeeded yet", after)
	}
	eventually(t, a.URL, 15*time.Second, func() error { return succeededAfter(time.Time{}) })

	if _, err := c.group.PauseGroup(ctx, &carillonv1.PauseGroupRequest{Id: g.Group.Id}); err != nil {
		t.Fatal(err)
	}
	// Once PauseGroup returned, no fire is sent: those claimed before it
	// are dropped before their send (a few milliseconds ahead of their
	// instant, for an executor that takes due_at); a second covers that.
	paused := time.Now().Add(time.Second)
	time.Sleep(3500 * time.Millisecond) // three instants and more
	// The pause ends somewhere within the call: instants from its start on
	// may fire.
	resumed := time.Now()
	if _, err := c.group.ResumeGroup(ctx, &carillonv1.ResumeGroupRequest{Id: g.Group.Id}); err != nil {
		t.Fatal(err)
	}
	returned := time.Now()
	eventually(t, a.URL, 15*time.Second, func() error { return succeededAfter(returned) })

	var skipped []*carillonv1.Run
	for _, r := range runs() {
		at := r.ScheduledAt.AsTime()
		switch {
		case r.Status == carillonv1.RunStatus_RUN_STATUS_SKIPPED:
			skipped = append(skipped, r)
		case at.After(paused) && at.Before(resumed):
			t.Errorf("run %d, scheduled %v in the pause (%v to %v), is %s: want no run in the pause", r.Id, at, paused, resumed, r.Status)
		}
	}
	if len(skipped) != 1 {
		t.Fatalf("%d SKIPPED runs, want one for the pause: %v", len(skipped), skipped)
	}
	r := skipped[0]
	if r.MissedCount < 3 || !strings.Contains(r.Message, "paused") || r.MissedUntil.AsTime().After(returned) {
		t.Errorf("the pause's record: missed %d until %v, %q; want at least 3 instants up to the resume (%v), naming the pause",
			r.MissedCount, r.MissedUntil.AsTime(), r.Message, returned)
	}
}
