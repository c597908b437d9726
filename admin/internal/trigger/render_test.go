package trigger_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/carillonhq/carillon/admin/internal/dbtest"
	"github.com/carillonhq/carillon/admin/internal/schedule"
	"github.com/carillonhq/carillon/admin/internal/store"
	"github.com/carillonhq/carillon/internal/testkit"
	carillonv1 "github.com/carillonhq/carillon/proto/carillon/v1"
)

// TestParamTemplate: a scheduled fire of a job whose param is a template
// reaches each executor of a sharding broadcast with the param rendered
// for its scheduled instant, in the job's zone, and its own shard, and the
// run records what its executor got; a job's param with braces and no
// template flag goes as it is; a template that fails to render fails its
// run, unsent.
func TestParamTemplate(t *testing.T) {
	t.Parallel()
	dbtest.Backends(t, func(t *testing.T, be dbtest.Backend) {
		ctx := context.Background()
		execs := []*acceptor{{}, {}}
		urls := []string{testkit.ServeExecutor(t, execs[0]), testkit.ServeExecutor(t, execs[1])}
		b := setup(t, be, carillonv1.AddressMode_ADDRESS_MODE_MANUAL, urls...)
		// 20:30 UTC on 23 November is 04:30 on the 24th in Shanghai: the
		// day before, there, is the 23rd.
		scheduled := time.Date(2026, 11, 23, 20, 30, 0, 0, time.UTC)
		const tmpl = `{{(.ScheduledAt.AddDate 0 0 -1).Format "20060102"}} {{.ScheduledAt.Format "15:04"}} shard {{.ShardIndex}}/{{.ShardTotal}} job {{.JobID}} attempt {{.Attempt}}`
		broadcast := b.job(t, func(j *store.Job) {
			j.Param, j.ParamTemplate, j.TimeZone = tmpl, true, "Asia/Shanghai"
			j.RouteStrategy = carillonv1.RouteStrategy_ROUTE_STRATEGY_SHARDING_BROADCAST
		})
		literal := b.job(t, func(j *store.Job) { j.Param = `{{.JobID}}` })
		broken := b.job(t, func(j *store.Job) { j.Param, j.ParamTemplate = `{{.Day}}`, true })
		var es []schedule.Entry
		for _, j := range []store.Job{broadcast, literal, broken} {
			runs, err := b.st.Runs.Insert(ctx, []store.Run{{JobID: j.ID, GroupID: b.group.ID, ShardTotal: 1, ScheduledAt: scheduled,
				Param: j.Param, TriggerType: carillonv1.TriggerType_TRIGGER_TYPE_SCHEDULE, Status: carillonv1.RunStatus_RUN_STATUS_PENDING}})
			if err != nil {
				t.Fatal(err)
			}
			es = append(es, schedule.Entry{RunID: runs[0].ID, JobID: j.ID, At: b.clock.Now(), TriggerType: carillonv1.TriggerType_TRIGGER_TYPE_SCHEDULE})
		}
		b.trig.Dispatcher.Fire(es)
		b.trig.Wait()

		// The broadcast: one run per executor, each with its shard.
		runs, err := b.st.Runs.List(ctx, store.RunFilter{JobID: broadcast.ID})
		if err != nil {
			t.Fatal(err)
		}
		if len(runs) != 2 {
			t.Fatalf("%d runs of the broadcast, want 2", len(runs))
		}
		for _, r := range runs {
			want := fmt.Sprintf("20261123 04:30 shard %d/2 job %d attempt 0", r.ShardIndex, broadcast.ID)
			exec := slices.Index(urls, r.ExecutorAddress) // each shard to its own executor, in the order routing chose
			if exec < 0 {
				t.Fatalf("shard %d (run %d, %s %q) sent to %q, not an executor of the group", r.ShardIndex, r.ID, r.Status, r.Message, r.ExecutorAddress)
			}
			if got, sent := execs[exec].param(r.ID); !sent || got != want {
				t.Errorf("shard %d (run %d) sent with %q (sent: %v), want %q", r.ShardIndex, r.ID, got, sent, want)
			}
			if r.SentParam() != want || r.Param != tmpl {
				t.Errorf("shard %d records param %q rendered as %q, want %q rendered as %q", r.ShardIndex, r.Param, r.SentParam(), tmpl, want)
			}
		}
		// The literal param, braces and all.
		r, _ := b.st.Runs.Get(ctx, es[1].RunID)
		p0, _ := execs[0].param(r.ID)
		p1, _ := execs[1].param(r.ID)
		if got := p0 + p1; got != `{{.JobID}}` || r.RenderedParam != nil {
			t.Errorf("a param that is not a template was sent as %q (rendered %v), want it as it is", got, r.RenderedParam)
		}
		// The template that fails: the run fails, saying why, unsent.
		r, _ = b.st.Runs.Get(ctx, es[2].RunID)
		if r.Status != carillonv1.RunStatus_RUN_STATUS_FAILED || !strings.Contains(r.Message, "param template failed to render") ||
			!strings.Contains(r.Message, "can't evaluate field Day") {
			t.Errorf("the broken template's run: %s %q, want FAILED saying the template failed", r.Status, r.Message)
		}
		if _, sent := execs[0].param(r.ID); sent {
			t.Error("the broken template's run was sent")
		}
	})
}
