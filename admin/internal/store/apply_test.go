package store_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/carillonhq/carillon/admin/internal/dbtest"
	"github.com/carillonhq/carillon/admin/internal/store"
	carillonv1 "github.com/carillonhq/carillon/proto/carillon/v1"
)

// TestJobNames: a job's name is stored and read back, unique within its
// group (ErrAlreadyExists, on create and on update), free in another
// group, and any number of jobs may have none.
func TestJobNames(t *testing.T) {
	t.Parallel()
	dbtest.Backends(t, func(t *testing.T, be dbtest.Backend) {
		ctx := context.Background()
		s, b := setup(t, be.DB(t))
		other, err := s.Groups.Create(ctx, store.Group{AppName: "other"}, t0)
		if err != nil {
			t.Fatal(err)
		}
		named := newJob(b.group.ID, time.Time{})
		named.Name = "etl"
		if named, err = s.Jobs.Create(ctx, named, t0); err != nil {
			t.Fatal(err)
		}
		if got, err := s.Jobs.Get(ctx, named.ID); err != nil || got.Name != "etl" {
			t.Fatalf("Job = %+v, %v; want the name etl", got, err)
		}
		twin := newJob(b.group.ID, time.Time{})
		twin.Name = "etl"
		if _, err := s.Jobs.Create(ctx, twin, t0); !errors.Is(err, store.ErrAlreadyExists) {
			t.Errorf("a second job named etl in the group: %v, want ErrAlreadyExists", err)
		}
		twin.GroupID = other.ID
		if _, err := s.Jobs.Create(ctx, twin, t0); err != nil {
			t.Errorf("a job named etl in another group: %v", err)
		}
		var unnamed []store.Job
		for range 2 {
			j, err := s.Jobs.Create(ctx, newJob(b.group.ID, time.Time{}), t0)
			if err != nil {
				t.Fatalf("a job without a name beside another: %v", err)
			}
			unnamed = append(unnamed, j)
		}
		unnamed[0].Name = "etl"
		if _, err := s.Jobs.Update(ctx, unnamed[0], false, t0); !errors.Is(err, store.ErrAlreadyExists) {
			t.Errorf("renaming a job to a taken name: %v, want ErrAlreadyExists", err)
		}
	})
}

// TestApplyTx: Store.Apply commits every write of its function or none:
// an error after writes, or ErrDryRun, leaves the database as it was.
func TestApplyTx(t *testing.T) {
	t.Parallel()
	dbtest.Backends(t, func(t *testing.T, be dbtest.Backend) {
		ctx := context.Background()
		s, _ := setup(t, be.DB(t))
		write := func(a *store.ApplyTx) error {
			g, err := a.CreateGroup(store.Group{AppName: "applied"})
			if err != nil {
				return err
			}
			j := newJob(g.ID, time.Time{})
			j.Name = "j"
			_, err = a.CreateJob(j)
			return err
		}
		boom := errors.New("a later item is bad")
		for _, tt := range []struct {
			name string
			end  error
			want error
		}{{"Error", boom, boom}, {"DryRun", store.ErrDryRun, nil}} {
			err := s.Apply(ctx, t0, func(a *store.ApplyTx) error {
				if err := write(a); err != nil {
					return err
				}
				gs, err := a.Groups()
				if err != nil || len(gs) != 2 {
					t.Errorf("%s: the transaction's groups: %v, %v; want its own new one too", tt.name, gs, err)
				}
				return tt.end
			})
			if !errors.Is(err, tt.want) {
				t.Errorf("%s: Apply = %v, want %v", tt.name, err, tt.want)
			}
			if _, err := s.Groups.ByApp(ctx, "applied"); !errors.Is(err, store.ErrNotFound) {
				t.Errorf("%s: the group after a rolled back Apply: %v, want ErrNotFound", tt.name, err)
			}
		}
		if err := s.Apply(ctx, t0, write); err != nil {
			t.Fatal(err)
		}
		g, err := s.Groups.ByApp(ctx, "applied")
		if err != nil {
			t.Fatal(err)
		}
		js, err := s.Jobs.List(ctx, store.JobFilter{GroupID: g.ID})
		if err != nil || len(js) != 1 || js[0].Name != "j" || !js[0].CreatedAt.Equal(t0) {
			t.Errorf("jobs after Apply: %+v, %v", js, err)
		}
	})
}

// TestApplyTxReadsAndSwitches: an Apply reads every calendar and a
// group's workflows with their nodes as the stores read them, switches a
// workflow's schedule off and on as Stop and Start do, and writes its
// audit entries whole.
func TestApplyTxReadsAndSwitches(t *testing.T) {
	t.Parallel()
	dbtest.Backends(t, func(t *testing.T, be dbtest.Backend) {
		ctx := context.Background()
		s, b := setup(t, be.DB(t))
		var cals []store.Calendar
		for _, name := range []string{"holidays", "closures"} {
			c, err := s.Calendars.Create(ctx, store.Calendar{Name: name, Description: name + " of the year", Definition: christmas}, t0)
			if err != nil {
				t.Fatal(err)
			}
			cals = append(cals, c)
		}
		other, err := s.Groups.Create(ctx, store.Group{AppName: "other"}, t0)
		if err != nil {
			t.Fatal(err)
		}
		j, k := aJob(t, s, b), aJob(t, s, b)
		param := "node's param"
		var ws []store.Workflow
		for i, g := range []int64{b.group.ID, other.ID, b.group.ID} {
			w, err := s.Workflows.Create(ctx, store.Workflow{GroupID: g, Name: fmt.Sprintf("w%d", i), Description: "d",
				ScheduleType: carillonv1.ScheduleType_SCHEDULE_TYPE_FIX_RATE, IntervalSeconds: int32(60 + i), TimeZone: "UTC",
				MisfireStrategy: carillonv1.MisfireStrategy_MISFIRE_STRATEGY_FIRE_ONCE_NOW, BlockStrategy: carillonv1.BlockStrategy_BLOCK_STRATEGY_SERIAL,
				Enabled: true, LastFireAt: t0.Add(-time.Minute), NextFireAt: t0.Add(time.Duration(i+1) * time.Minute),
				Nodes:       []store.WorkflowNode{{Key: "a", JobID: j.ID, Param: &param}, {Key: "b", JobID: k.ID, DependsOn: []string{"a"}}},
				AlarmEmails: []string{"ops@example.com"}, AlarmWebhookURL: "https://hooks.example.com/w"}, t0)
			if err != nil {
				t.Fatal(err)
			}
			ws = append(ws, w)
		}
		t1, t2 := t0.Add(time.Second), t0.Add(2*time.Second)
		entry := store.AuditEntry{At: t1, UserID: 7, Username: "ops", Action: "apply", Target: "workflow 1", Detail: `{"action":"update"}`, Peer: "10.0.0.1"}
		err = s.Apply(ctx, t1, func(a *store.ApplyTx) error {
			got, err := a.Calendars()
			if err != nil {
				return err
			}
			if diff := cmp.Diff(cals, got); diff != "" {
				t.Errorf("the transaction's calendars (-want +got):\n%s", diff)
			}
			gotWs, err := a.WorkflowsOf(b.group.ID)
			if err != nil {
				return err
			}
			if diff := cmp.Diff([]store.Workflow{ws[0], ws[2]}, gotWs); diff != "" {
				t.Errorf("the transaction's workflows of the group (-want +got):\n%s", diff)
			}
			if err := a.SetWorkflowEnabled(ws[0].ID, false, time.Time{}); err != nil {
				return err
			}
			return a.Audit(entry)
		})
		if err != nil {
			t.Fatal(err)
		}
		got, err := s.Workflows.Get(ctx, ws[0].ID)
		if err != nil {
			t.Fatal(err)
		}
		if got.Enabled || !got.NextFireAt.IsZero() || !got.UpdatedAt.Equal(t1) {
			t.Errorf("stopped in an Apply: enabled %v, next %v, updated %v; want stopped, no next fire, updated at %v",
				got.Enabled, got.NextFireAt, got.UpdatedAt, t1)
		}
		if err := s.Apply(ctx, t2, func(a *store.ApplyTx) error {
			return a.SetWorkflowEnabled(ws[0].ID, true, t0.Add(time.Hour))
		}); err != nil {
			t.Fatal(err)
		}
		if got, err = s.Workflows.Get(ctx, ws[0].ID); err != nil {
			t.Fatal(err)
		}
		if !got.Enabled || !got.NextFireAt.Equal(t0.Add(time.Hour)) || !got.UpdatedAt.Equal(t2) {
			t.Errorf("started in an Apply: enabled %v, next %v, updated %v; want started, next fire %v, updated at %v",
				got.Enabled, got.NextFireAt, got.UpdatedAt, t0.Add(time.Hour), t2)
		}
		if got, err = s.Workflows.Get(ctx, ws[2].ID); err != nil || !got.Enabled || !got.UpdatedAt.Equal(t0) {
			t.Errorf("the group's other workflow: %+v, %v; want it as created", got, err)
		}
		log, err := s.Audit.Log(ctx, store.AuditFilter{Action: "apply"})
		if err != nil || len(log) != 1 {
			t.Fatalf("the audit log: %+v, %v; want the Apply's entry", log, err)
		}
		entry.ID = log[0].ID
		if diff := cmp.Diff(entry, log[0]); diff != "" {
			t.Errorf("the Apply's audit entry (-want +got):\n%s", diff)
		}
	})
}
