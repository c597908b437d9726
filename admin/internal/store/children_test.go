package store_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/carillonhq/carillon/admin/internal/pgtest"
	"github.com/carillonhq/carillon/admin/internal/store"
)

// TestChildJobs: a job's child jobs keep the order it lists them in
// through JobStore.Create, JobStore.Update, JobStore.Get, JobStore.List, JobStore.Definitions and Apply
// (JobStore.Import: TestImportJobs); a job listed as a child cannot be deleted (ErrInUse naming every
// parent) until its parents drop it or are deleted; a missing child or
// one listed twice is refused and stores nothing. Over both backends.
func TestChildJobs(t *testing.T) {
	t.Parallel()
	for _, be := range pgtest.Backends {
		t.Run(be.Name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			s, b := setup(t, be.DB(t))
			create := func(children ...int64) store.Job {
				t.Helper()
				j := newJob(b.group.ID, time.Time{})
				j.ChildJobIDs = children
				j, err := s.Jobs.Create(ctx, j, t0)
				if err != nil {
					t.Fatal(err)
				}
				return j
			}
			// wantChildren checks job id's children as every read gives them.
			wantChildren := func(what string, id int64, want ...int64) {
				t.Helper()
				j, err := s.Jobs.Get(ctx, id)
				if err != nil {
					t.Fatal(err)
				}
				js, err := s.Jobs.List(ctx, store.JobFilter{GroupID: b.group.ID})
				if err != nil {
					t.Fatal(err)
				}
				i := slices.IndexFunc(js, func(j store.Job) bool { return j.ID == id })
				defs, err := s.Jobs.Definitions(ctx, []int64{id})
				if err != nil {
					t.Fatal(err)
				}
				if i < 0 || defs[id] == nil {
					t.Fatalf("%s: job %d missing from Jobs or JobDefinitions", what, id)
				}
				for read, got := range map[string][]int64{"Job": j.ChildJobIDs, "Jobs": js[i].ChildJobIDs, "JobDefinitions": defs[id].ChildJobIDs} {
					if !slices.Equal(got, want) {
						t.Errorf("%s: %s of job %d gives children %v, want %v", what, read, id, got, want)
					}
				}
			}

			c1, c2, c3 := create().ID, create().ID, create().ID
			p := create(c3, c1, c2)
			wantChildren("created", p.ID, c3, c1, c2)
			wantChildren("a job without children", c1)

			p.ChildJobIDs = []int64{c2, c3}
			if _, err := s.Jobs.Update(ctx, p, false, t0.Add(time.Second)); err != nil {
				t.Fatal(err)
			}
			wantChildren("updated", p.ID, c2, c3)
			p.Description = "children kept"
			if _, err := s.Jobs.Update(ctx, p, false, t0.Add(2*time.Second)); err != nil {
				t.Fatal(err)
			}
			wantChildren("updated in another field", p.ID, c2, c3)

			q := create(c2)
			err := s.Jobs.Delete(ctx, c2)
			if !errors.Is(err, store.ErrInUse) || !strings.Contains(err.Error(), fmt.Sprintf("job %d (", p.ID)) ||
				!strings.Contains(err.Error(), fmt.Sprintf("job %d (", q.ID)) {
				t.Errorf("deleting child job %d of jobs %d and %d: %v, want ErrInUse naming both", c2, p.ID, q.ID, err)
			}
			if err := s.Jobs.Delete(ctx, c1); err != nil {
				t.Errorf("deleting job %d, no longer a child: %v", c1, err)
			}

			// Apply: its reads see its own writes.
			err = s.Apply(ctx, t0.Add(3*time.Second), func(a *store.ApplyTx) error {
				if err := a.SetChildJobs(q.ID, []int64{c3, c2}); err != nil {
					return err
				}
				js, err := a.JobsOf(b.group.ID)
				if err != nil {
					return err
				}
				if i := slices.IndexFunc(js, func(j store.Job) bool { return j.ID == q.ID }); i < 0 || !slices.Equal(js[i].ChildJobIDs, []int64{c3, c2}) {
					t.Errorf("JobsOf in the Apply that set job %d's children: %v", q.ID, js)
				}
				n, err := a.CreateJob(newJob(b.group.ID, time.Time{}))
				if err != nil {
					return err
				}
				return a.SetChildJobs(n.ID, []int64{q.ID, c3})
			})
			if err != nil {
				t.Fatal(err)
			}
			wantChildren("set by Apply", q.ID, c3, c2)
			js, err := s.Jobs.List(ctx, store.JobFilter{GroupID: b.group.ID})
			if err != nil {
				t.Fatal(err)
			}
			if last := js[len(js)-1]; !slices.Equal(last.ChildJobIDs, []int64{q.ID, c3}) {
				t.Errorf("job %d created by Apply: children %v, want [%d %d]", last.ID, last.ChildJobIDs, q.ID, c3)
			}

			// Deleting the parents deletes their links.
			for _, id := range []int64{js[len(js)-1].ID, q.ID, p.ID} {
				if err := s.Jobs.Delete(ctx, id); err != nil {
					t.Fatalf("delete parent %d: %v", id, err)
				}
			}
			for _, id := range []int64{c2, c3} {
				if err := s.Jobs.Delete(ctx, id); err != nil {
					t.Errorf("delete job %d once its parents are gone: %v", id, err)
				}
			}

			// Refusals store nothing.
			all, _, err := s.Jobs.Count(ctx, store.AllGroups)
			if err != nil {
				t.Fatal(err)
			}
			k := create()
			bad := newJob(b.group.ID, time.Time{})
			bad.ChildJobIDs = []int64{k.ID, k.ID + 1000}
			if _, err := s.Jobs.Create(ctx, bad, t0); !errors.Is(err, store.ErrNotFound) || !strings.Contains(err.Error(), "child_job_ids[1]") {
				t.Errorf("a job with a missing child: %v, want ErrNotFound naming child_job_ids[1]", err)
			}
			bad.ChildJobIDs = []int64{k.ID, k.ID}
			if _, err := s.Jobs.Create(ctx, bad, t0); !errors.Is(err, store.ErrAlreadyExists) {
				t.Errorf("a job listing a child twice: %v, want ErrAlreadyExists", err)
			}
			if n, _, err := s.Jobs.Count(ctx, store.AllGroups); err != nil || n != all+1 {
				t.Errorf("after the refused creates: %d jobs, %v; want %d", n, err, all+1)
			}
			r := create(k.ID)
			r.ChildJobIDs = []int64{k.ID + 1000}
			if _, err := s.Jobs.Update(ctx, r, false, t0.Add(4*time.Second)); !errors.Is(err, store.ErrNotFound) {
				t.Errorf("an update naming a missing child: %v, want ErrNotFound", err)
			}
			wantChildren("after a refused update", r.ID, k.ID)
		})
	}
}

// TestFollowChildren: on a PostgreSQL database that two admins share, a
// change of a job's child jobs alone (Apply's SetChildJobs, which leaves
// the job's row as it was, and with no other job change after it) reaches
// the other admin's job cache.
func TestFollowChildren(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	here, there, b := sharedAdmins(t)

	var ids []int64
	for range 2 {
		j, err := here.Jobs.Create(ctx, newJob(b.group.ID, time.Time{}), t0)
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, j.ID)
	}
	parent, child := ids[0], ids[1]
	children := func() []int64 {
		defs, err := there.Jobs.Definitions(ctx, []int64{parent})
		if err != nil {
			t.Fatal(err)
		}
		return defs[parent].ChildJobIDs
	}
	if got := children(); len(got) != 0 { // now cached by the other admin
		t.Fatalf("the other admin's children of job %d before: %v", parent, got)
	}
	if err := here.Apply(ctx, t0, func(a *store.ApplyTx) error { return a.SetChildJobs(parent, []int64{child}) }); err != nil {
		t.Fatal(err)
	}
	wait, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if !there.Followed().Await(wait, func() bool { return slices.Equal(children(), []int64{child}) }) {
		t.Errorf("the other admin's children of job %d 10 s after SetChildJobs: %v, want [%d]", parent, children(), child)
	}
}
