package store_test

import (
	"context"
	"testing"
	"time"

	"github.com/carillonhq/carillon/admin/internal/pgtest"
	"github.com/carillonhq/carillon/admin/internal/store"
	carillonv1 "github.com/carillonhq/carillon/proto/carillon/v1"
)

// runEdits are updates of a job, each saying whether it changes what a
// run's request carries to its executor: only those replace the runs sent
// ahead of their instant (UpdatedSince).
var runEdits = []struct {
	name     string
	edit     func(j *store.Job)
	schedule bool // the schedule changed (JobStore.Update's scheduleChanged)
	replaces bool
}{
	{"Nothing", func(*store.Job) {}, false, false},
	{"Description", func(j *store.Job) { j.Description = "renamed" }, false, false},
	{"Owner", func(j *store.Job) { j.Owner = "someone" }, false, false},
	{"AlarmEmails", func(j *store.Job) { j.AlarmEmails = []string{"ops@example.com"} }, false, false},
	{"AlarmWebhook", func(j *store.Job) { j.AlarmWebhookURL = "https://example.com/hook" }, false, false},
	{"Schedule", func(j *store.Job) { j.IntervalSeconds = 7 }, true, false},
	{"MisfireStrategy", func(j *store.Job) {
		j.MisfireStrategy = carillonv1.MisfireStrategy_MISFIRE_STRATEGY_FIRE_ONCE_NOW
	}, false, false},
	{"RouteStrategy", func(j *store.Job) { j.RouteStrategy = carillonv1.RouteStrategy_ROUTE_STRATEGY_LAST }, false, false},
	{"Retries", func(j *store.Job) { j.RetryCount, j.RetryDelaySeconds, j.RetryBackoff = 3, 5, true }, false, false},
	{"ScriptUpdatedAtBelowAMillisecond", func(j *store.Job) { j.ScriptUpdatedAt = j.ScriptUpdatedAt.Add(time.Microsecond) }, false, false}, // below what is stored
	{"Handler", func(j *store.Job) { j.Handler = "other" }, false, true},
	{"Param", func(j *store.Job) { j.Param = "new" }, false, true},
	{"BlockStrategy", func(j *store.Job) { j.BlockStrategy = carillonv1.BlockStrategy_BLOCK_STRATEGY_DISCARD_LATER }, false, true},
	{"Timeout", func(j *store.Job) { j.TimeoutSeconds = 30 }, false, true},
	{"ScriptType", func(j *store.Job) { j.ScriptType = carillonv1.ScriptType_SCRIPT_TYPE_PYTHON }, false, true},
	{"ScriptSource", func(j *store.Job) { j.ScriptSource = "echo new" }, false, true},
	{"ScriptUpdatedAt", func(j *store.Job) { j.ScriptUpdatedAt = j.ScriptUpdatedAt.Add(time.Second) }, false, true},
	{"ParamAndDescription", func(j *store.Job) { j.Param, j.Description = "new", "renamed" }, false, true},
}

// runEditJob is the job the edits of runEdits start from: a script job,
// so that its script's fields count.
func runEditJob(groupID int64) store.Job {
	j := newJob(groupID, t0.Add(time.Minute))
	j.Param, j.TimeoutSeconds, j.BlockStrategy = "old", 10, carillonv1.BlockStrategy_BLOCK_STRATEGY_SERIAL
	j.ScriptType, j.ScriptSource, j.ScriptUpdatedAt = carillonv1.ScriptType_SCRIPT_TYPE_SHELL, "echo old", t0
	return j
}

// TestUpdateReplacesOnlyWhatRunsCarry: JobStore.Update marks a job updated
// (UpdatedSince) only when what a run's request carries to its executor
// changed: its handler, param, block strategy, timeout or script. A no-op
// update, or one of the job's description, alarms, schedule, routing or
// retries, leaves the runs sent ahead of their instant as they were sent.
func TestUpdateReplacesOnlyWhatRunsCarry(t *testing.T) {
	t.Parallel()
	for _, be := range pgtest.Backends {
		t.Run(be.Name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			s, b := setup(t, be.DB(t))
			for _, tt := range runEdits {
				t.Run(tt.name, func(t *testing.T) {
					j, err := s.Jobs.Create(ctx, runEditJob(b.group.ID), t0)
					if err != nil {
						t.Fatal(err)
					}
					seq := s.Jobs.StopSeq()
					tt.edit(&j)
					if _, err := s.Jobs.Update(ctx, j, tt.schedule, t0.Add(time.Second)); err != nil {
						t.Fatal(err)
					}
					if got := s.Jobs.UpdatedSince(j.ID, seq); got != tt.replaces {
						t.Errorf("UpdatedSince after an update of %s = %v, want %v", tt.name, got, tt.replaces)
					}
					if s.Jobs.StoppedSince(j.ID, seq) {
						t.Errorf("StoppedSince after an update of %s, want false", tt.name)
					}
				})
			}
		})
	}
}
