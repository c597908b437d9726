package store_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/carillonhq/carillon/admin/internal/dbtest"
	"github.com/carillonhq/carillon/admin/internal/store"
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
