package retention_test

import (
	"context"
	"database/sql"
	"errors"
	"testing"
	"time"

	"github.com/carillonhq/carillon/admin/internal/dbtest"
	"github.com/carillonhq/carillon/admin/internal/retention"
	"github.com/carillonhq/carillon/admin/internal/store"
	carillonv1 "github.com/carillonhq/carillon/proto/carillon/v1"
)

// TestDeleteWorkflowRuns: the workflow runs that ended before the cutoff
// are deleted with their nodes' rows, over several batches; those that
// ended since, and an active one however old, are kept.
func TestDeleteWorkflowRuns(t *testing.T) {
	t.Parallel()
	dbtest.Backends(t, func(t *testing.T, be dbtest.Backend) {
		deleteWorkflowRuns(t, be)
	})
}

func deleteWorkflowRuns(t *testing.T, be dbtest.Backend) {
	t.Helper()
	ctx := context.Background()
	dsn := be.DB(t)
	st := dbtest.Open(t, dsn)
	now := time.Date(2026, 11, 23, 8, 0, 0, 0, time.UTC)
	g, err := st.Groups.Create(ctx, store.Group{AppName: "app", Title: "app"}, now)
	if err != nil {
		t.Fatal(err)
	}
	j, err := st.Jobs.Create(ctx, store.Job{GroupID: g.ID, Description: "d", Handler: "h", ScheduleType: carillonv1.ScheduleType_SCHEDULE_TYPE_NONE}, now)
	if err != nil {
		t.Fatal(err)
	}
	// DISCARD_LATER: the first workflow run stays RUNNING (its node never
	// reports), and each later one ends SKIPPED when it is made.
	w, err := st.Workflows.Create(ctx, store.Workflow{GroupID: g.ID, Name: "w", ScheduleType: carillonv1.ScheduleType_SCHEDULE_TYPE_NONE,
		BlockStrategy: carillonv1.BlockStrategy_BLOCK_STRATEGY_DISCARD_LATER,
		Nodes:         []store.WorkflowNode{{Key: "a", JobID: j.ID}, {Key: "b", JobID: j.ID, DependsOn: []string{"a"}}}}, now)
	if err != nil {
		t.Fatal(err)
	}
	const hours = 1100
	active, err := st.Workflows.Trigger(ctx, w.ID, carillonv1.TriggerType_TRIGGER_TYPE_API, nil, now.Add(-hours*time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	ended := map[int64]time.Time{}
	for age := hours - 1; age >= 0; age-- { // one an hour, oldest first
		at := now.Add(-time.Duration(age) * time.Hour)
		ch, err := st.Workflows.Trigger(ctx, w.ID, carillonv1.TriggerType_TRIGGER_TYPE_API, nil, at)
		if err != nil {
			t.Fatal(err)
		}
		ended[ch.WorkflowRunID] = at
	}
	cutoff := now.AddDate(0, 0, -20) // 480 hours: 619 workflow runs ended before it, more than a batch
	n, err := retention.DeleteWorkflowRuns(ctx, st, cutoff)
	if err != nil {
		t.Fatal(err)
	}
	want := 0
	for id, at := range ended {
		_, err := st.Workflows.Run(ctx, id)
		switch old := at.Before(cutoff); {
		case old && !errors.Is(err, store.ErrNotFound):
			t.Errorf("workflow run %d ended %v, before the cutoff: %v, want it deleted", id, at, err)
		case !old && err != nil:
			t.Errorf("workflow run %d ended %v, after the cutoff: %v, want it kept", id, at, err)
		case old:
			want++
		}
	}
	if n != int64(want) || want <= 500 {
		t.Errorf("deleted %d workflow runs, want %d (more than one batch)", n, want)
	}
	if wr, err := st.Workflows.Run(ctx, active.WorkflowRunID); err != nil || wr.Status != carillonv1.WorkflowRunStatus_WORKFLOW_RUN_STATUS_RUNNING {
		t.Errorf("the active workflow run: %+v, %v; want it kept, RUNNING", wr.Status, err)
	}
	// Their nodes' rows went with them.
	driver, source := "sqlite", "file:"+dsn+"?mode=ro"
	if be.Name == dbtest.Postgres.Name {
		driver, source = "pgx", dsn
	}
	db, err := sql.Open(driver, source)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var nodes int
	if err := db.QueryRowContext(ctx, `SELECT count(*) FROM workflow_node_runs`).Scan(&nodes); err != nil {
		t.Fatal(err)
	}
	if kept := hours - want + 1; nodes != 2*kept {
		t.Errorf("%d node rows left, want %d: two for each of the %d workflow runs kept", nodes, 2*kept, kept)
	}
}
