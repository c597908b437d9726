package store_test

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/carillonhq/carillon/admin/internal/pgtest"
	"github.com/carillonhq/carillon/admin/internal/store"
)

// sharedAdmins opens two Stores on a new PostgreSQL database, as two
// admins sharing it: here (set up as setup does) and there, which follows
// the other admins' writes (FollowLoop) for the rest of the test.
func sharedAdmins(t *testing.T) (here, there *store.Store, b *bundle) {
	t.Helper()
	db := pgtest.URL(t)
	here, b = setup(t, db)
	there, err := store.Open(context.Background(), db)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { there.Close() })
	start(t, there.FollowLoop())
	return here, there, b
}

// TestFollowUpdates: on a PostgreSQL database that two admins share, an
// update made through one reaches the other (follow) as the first marks
// it: UpdatedSince only when what the job's runs carry to their executors
// changed (runEdits), with the job cache emptied first, so the new
// definition is what a run sent again reads; and a stop as StoppedSince.
func TestFollowUpdates(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	here, there, b := sharedAdmins(t)

	jobs := make([]store.Job, len(runEdits))
	var ids []int64
	var err error
	for i := range runEdits {
		if jobs[i], err = here.Jobs.Create(ctx, runEditJob(b.group.ID), t0); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, jobs[i].ID)
	}
	stopped, err := here.Jobs.Create(ctx, runEditJob(b.group.ID), t0)
	if err != nil {
		t.Fatal(err)
	}
	// The other admin caches the definitions: the updates must empty it.
	if _, err := there.Jobs.Definitions(ctx, ids); err != nil {
		t.Fatal(err)
	}
	seq := there.Jobs.StopSeq()
	for i, tt := range runEdits {
		tt.edit(&jobs[i])
		if jobs[i], err = here.Jobs.Update(ctx, jobs[i], tt.schedule, t0.Add(time.Second)); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := here.Jobs.Stop(ctx, stopped.ID, t0.Add(time.Second)); err != nil { // the last change: when it is seen, all are
		t.Fatal(err)
	}

	deadline := time.After(10 * time.Second)
	for {
		marked := there.Jobs.Stopped() // before the check: a mark after it closes it
		if there.Jobs.StoppedSince(stopped.ID, seq) {
			break
		}
		select {
		case <-marked:
		case <-deadline:
			t.Fatal("the other admin did not see the stop within 10 s")
		}
	}
	defs, err := there.Jobs.Definitions(ctx, ids)
	if err != nil {
		t.Fatal(err)
	}
	for i, tt := range runEdits {
		if got := there.Jobs.UpdatedSince(jobs[i].ID, seq); got != tt.replaces {
			t.Errorf("the other admin's UpdatedSince after an update of %s = %v, want %v", tt.name, got, tt.replaces)
		}
		// Times are stored to the millisecond (ScriptUpdatedAtBelowAMillisecond).
		if diff := cmp.Diff(jobs[i].Definition(), defs[jobs[i].ID], cmpopts.EquateEmpty(), cmpopts.EquateApproxTime(time.Millisecond)); diff != "" {
			t.Errorf("the other admin's definition after an update of %s (-want +got):\n%s", tt.name, diff)
		}
		if there.Jobs.StoppedSince(jobs[i].ID, seq) {
			t.Errorf("the other admin's StoppedSince after an update of %s, want false", tt.name)
		}
	}
	if there.Jobs.UpdatedSince(stopped.ID, seq) {
		t.Errorf("the other admin's UpdatedSince after a stop, want false")
	}
}
