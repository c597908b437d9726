package store_test

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/carillonhq/carillon/admin/internal/pgtest"
	"github.com/carillonhq/carillon/admin/internal/store"
	carillonv1 "github.com/carillonhq/carillon/proto/carillon/v1"
)

// TestImportJobs: groups (with their executor protocol and script
// setting) and jobs created together with new ids, children remapped in
// their order; a taken app name creates nothing. Over both backends.
func TestImportJobs(t *testing.T) {
	t.Parallel()
	for _, be := range pgtest.Backends {
		t.Run(be.Name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			s, b := setup(t, be.DB(t)) // group "app" takes id 1
			im := store.Import{
				Groups: []store.Group{{ID: 7, AppName: "xxl", Title: "XXL", AddressMode: carillonv1.AddressMode_ADDRESS_MODE_AUTO,
					ExecutorProtocol: carillonv1.ExecutorProtocol_EXECUTOR_PROTOCOL_XXL_JOB, AllowScripts: true}},
				Jobs: []store.Job{newJob(7, time.Time{}), newJob(7, time.Time{}), newJob(7, time.Time{})},
			}
			im.Jobs[0].ID, im.Jobs[1].ID, im.Jobs[2].ID = 30, 31, 32
			im.Jobs[0].ChildJobIDs = []int64{32, 31}
			out, err := s.Jobs.Import(ctx, im, t0)
			if err != nil {
				t.Fatal(err)
			}
			g, err := s.Groups.Get(ctx, out.GroupIDs[7])
			if err != nil {
				t.Fatal(err)
			}
			if g.ID == b.group.ID || g.ExecutorProtocol != carillonv1.ExecutorProtocol_EXECUTOR_PROTOCOL_XXL_JOB || !g.AllowScripts {
				t.Errorf("imported group %+v: want a new id, XXL_JOB, scripts allowed", g)
			}
			parent, err := s.Jobs.Get(ctx, out.JobIDs[30])
			if err != nil {
				t.Fatal(err)
			}
			if want := []int64{out.JobIDs[32], out.JobIDs[31]}; parent.GroupID != g.ID || !slices.Equal(parent.ChildJobIDs, want) {
				t.Errorf("imported parent job %+v: want group %d and children %v in order", parent, g.ID, want)
			}
			im.Jobs = nil
			if _, err := s.Jobs.Import(ctx, im, t0); !errors.Is(err, store.ErrAlreadyExists) {
				t.Errorf("importing app name xxl again: %v, want ErrAlreadyExists", err)
			}
		})
	}
}
