package store_test

import (
	"context"
	"maps"
	"testing"
	"time"

	"github.com/carillonhq/carillon/admin/internal/dbtest"
	"github.com/carillonhq/carillon/admin/internal/followup"
	"github.com/carillonhq/carillon/admin/internal/store"
	carillonv1 "github.com/carillonhq/carillon/proto/carillon/v1"
)

// settleOutputs claims a node's pending run and settles it SUCCEEDED at
// at with outputs.
func settleOutputs(t *testing.T, s *store.Store, r store.Run, outputs map[string]string, at time.Time) store.Settled {
	t.Helper()
	return settleWith(t, s, mustClaim(t, s, r, at), carillonv1.RunStatus_RUN_STATUS_SUCCEEDED, outputs, at)
}

// settleWith settles running run r with status and outputs at at.
func settleWith(t *testing.T, s *store.Store, r store.Run, status carillonv1.RunStatus, outputs map[string]string, at time.Time) store.Settled {
	t.Helper()
	out, err := s.Runs.Settle(context.Background(), followup.Policy{}, []store.Result{{RunID: r.ID, Status: status, FinishedAt: at, Outputs: outputs}})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// storedRun reads run id back.
func storedRun(t *testing.T, s *store.Store, id int64) store.Run {
	t.Helper()
	r, err := s.Runs.Get(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// TestWorkflowContext: a run's outputs are stored with it; a node's runs
// are made with the merged outputs of its dependencies as inputs, merged
// in the order of its depends_on (not the order they finished), and a
// retry of a node's run keeps its inputs and not the failed attempt's
// outputs. A node without dependencies, or whose dependencies published
// nothing, has none.
func TestWorkflowContext(t *testing.T) {
	t.Parallel()
	dbtest.Backends(t, func(t *testing.T, be dbtest.Backend) {
		s, ch := triggerDiamond(t, be, 1)
		extract := byNode(t, ch.FollowUps, "extract")
		if extract.Inputs != nil {
			t.Fatalf("root extract has inputs %v, want none", extract.Inputs)
		}
		out := settleOutputs(t, s, extract, map[string]string{"rows": "42", "shared": "from extract"}, t0.Add(time.Second))
		if got := storedRun(t, s, extract.ID).Outputs; !maps.Equal(got, map[string]string{"rows": "42", "shared": "from extract"}) {
			t.Fatalf("extract's stored outputs %v", got)
		}
		a, bRun := byNode(t, out.FollowUps, "transform_a"), byNode(t, out.FollowUps, "transform_b")
		for _, r := range []store.Run{a, bRun, storedRun(t, s, a.ID)} {
			if !maps.Equal(r.Inputs, map[string]string{"rows": "42", "shared": "from extract"}) {
				t.Fatalf("%s's run %d has inputs %v, want extract's outputs", r.WorkflowNode, r.ID, r.Inputs)
			}
		}
		// transform_b finishes first; transform_a fails once, publishing
		// something its retry does not repeat.
		settleOutputs(t, s, bRun, map[string]string{"b": "2", "shared": "from b"}, t0.Add(2*time.Second))
		failed := settleWith(t, s, mustClaim(t, s, a, t0.Add(3*time.Second)), carillonv1.RunStatus_RUN_STATUS_FAILED,
			map[string]string{"stale": "from the failed attempt"}, t0.Add(3*time.Second))
		if len(failed.FollowUps) != 1 || failed.FollowUps[0].TriggerType != carillonv1.TriggerType_TRIGGER_TYPE_RETRY {
			t.Fatalf("transform_a's failure made %+v, want its retry", failed.FollowUps)
		}
		retry := failed.FollowUps[0]
		if !maps.Equal(retry.Inputs, a.Inputs) || retry.Outputs != nil {
			t.Fatalf("retry has inputs %v, outputs %v; want the node's inputs and no outputs", retry.Inputs, retry.Outputs)
		}
		last := settleOutputs(t, s, storedRun(t, s, retry.ID), map[string]string{"a": "1", "shared": "from a"}, t0.Add(4*time.Second))
		load := byNode(t, last.FollowUps, "load")
		// load depends on transform_a, then transform_b: b's "shared" wins.
		want := map[string]string{"a": "1", "b": "2", "shared": "from b"}
		if !maps.Equal(load.Inputs, want) || !maps.Equal(storedRun(t, s, load.ID).Inputs, want) {
			t.Fatalf("load's inputs %v (stored %v), want %v", load.Inputs, storedRun(t, s, load.ID).Inputs, want)
		}
		// A run that published nothing stores NULL, read as nil.
		settle(t, s, mustClaim(t, s, byNode(t, ch.FollowUps, "other"), t0.Add(5*time.Second)), carillonv1.RunStatus_RUN_STATUS_SUCCEEDED, t0.Add(5*time.Second))
		if got := storedRun(t, s, byNode(t, ch.FollowUps, "other").ID); got.Outputs != nil || got.Inputs != nil {
			t.Fatalf("other: outputs %v, inputs %v; want none", got.Outputs, got.Inputs)
		}
	})
}

// mustClaim claims pending run r at at.
func mustClaim(t *testing.T, s *store.Store, r store.Run, at time.Time) store.Run {
	t.Helper()
	got, ok, err := claimRun(context.Background(), s, r.ID, r.TriggerType, at)
	if err != nil || !ok {
		t.Fatalf("claim run %d (%s): ok %v err %v", r.ID, r.WorkflowNode, ok, err)
	}
	return got
}
