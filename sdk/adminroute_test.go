package sdk

import (
	"context"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/carillonhq/carillon/internal/testkit"
	carillonv1 "github.com/carillonhq/carillon/proto/carillon/v1"
	"github.com/carillonhq/carillon/proto/carillon/v1/carillonv1connect"
	"github.com/carillonhq/carillon/sdk/internal/report"
)

// namedAdmin is a real RegistryService that says its admin id, remembers
// the run ids of the results reported to it, and refuses those of refuse.
type namedAdmin struct {
	carillonv1connect.UnimplementedRegistryServiceHandler
	id     string
	refuse map[int64]bool

	mu        sync.Mutex
	registers int
	reported  []int64
}

func (n *namedAdmin) Register(context.Context, *carillonv1.RegisterRequest) (*carillonv1.RegisterResponse, error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.registers++
	return &carillonv1.RegisterResponse{AdminId: n.id}, nil
}

func (n *namedAdmin) ReportResults(_ context.Context, req *carillonv1.ReportResultsRequest) (*carillonv1.ReportResultsResponse, error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	res := &carillonv1.ReportResultsResponse{AdminId: n.id}
	for _, r := range req.GetResults() {
		n.reported = append(n.reported, r.GetRunId())
		o := &carillonv1.ResultOutcome{RunId: r.GetRunId()}
		if n.refuse[r.GetRunId()] {
			o.Code, o.Message = "invalid_argument", "refused by "+n.id
		}
		res.Outcomes = append(res.Outcomes, o)
	}
	return res, nil
}

// take returns the run ids reported so far and how many heartbeats came,
// and forgets the run ids.
func (n *namedAdmin) take() (reported []int64, registers int) {
	n.mu.Lock()
	defer n.mu.Unlock()
	reported, n.reported = n.reported, nil
	return reported, n.registers
}

// TestResultsGoToTheirAdmin: the heartbeat registers with the first admin
// only, until a run comes from an admin whose id the executor does not
// know; the next heartbeat asks the others, and from then on each result
// goes to the admin that sent its run, with its refusals where they
// belong in the batch. Results of runs from an admin alone (no id) or
// from one not known go to the first that answers.
func TestResultsGoToTheirAdmin(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	first, second := &namedAdmin{id: "admin-1"}, &namedAdmin{id: "admin-2", refuse: map[int64]bool{3: true}}
	adm := newAdmins([]string{testkit.ServeRegistry(t, first), testkit.ServeRegistry(t, second)}, http.DefaultClient, "", "instance")
	heartbeat := func() {
		t.Helper()
		if _, err := adm.register(ctx, "app", "127.0.0.1:9999", "instance", clockReading{}); err != nil {
			t.Fatal(err)
		}
		adm.discover(ctx, "app", "127.0.0.1:9999", "instance", clockReading{})
	}
	result := func(id int64, admin string) report.Result {
		r := report.NewResult(id, carillonv1.RunStatus_RUN_STATUS_SUCCEEDED, "", time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC))
		r.AdminID = admin
		return r
	}
	batch := []report.Result{result(1, "admin-2"), result(2, ""), result(3, "admin-2"), result(4, "admin-1"), result(5, "admin-9")}

	heartbeat()
	adm.sentBy("admin-1") // known: its heartbeat said so
	heartbeat()
	if _, n := second.take(); n != 0 {
		t.Errorf("the second admin got %d heartbeats while every run came from the first; want none", n)
	}
	// Not known yet: to the first admin, which refuses nothing.
	refusals, err := adm.reportResults(ctx, batch)
	if err != nil || refusals != nil {
		t.Fatalf("reportResults before the second admin's id is known: refusals %v, err %v; want none", refusals, err)
	}
	if got, _ := first.take(); !cmp.Equal(got, []int64{1, 2, 3, 4, 5}) {
		t.Errorf("before the second admin's id is known, the first admin got results %v, want all", got)
	}

	adm.sentBy("admin-2")
	heartbeat()
	if _, n := second.take(); n != 1 {
		t.Errorf("the second admin got %d heartbeats after a run came from it; want 1, to learn its id", n)
	}
	refusals, err = adm.reportResults(ctx, batch)
	if err != nil {
		t.Fatal(err)
	}
	got1, _ := first.take()
	got2, _ := second.take()
	if !cmp.Equal(got1, []int64{2, 4, 5}) || !cmp.Equal(got2, []int64{1, 3}) {
		t.Errorf("results to the first admin %v, to the second %v; want [2 4 5] (no id, its own, an unknown one) and [1 3]", got1, got2)
	}
	want := make([]report.Refusal, len(batch))
	want[2] = report.Refusal{Code: "invalid_argument", Message: "refused by admin-2"}
	if !cmp.Equal(refusals, want) {
		t.Errorf("refusals %v, want %v: the second admin's refusal of run 3, at its place in the batch", refusals, want)
	}
	heartbeat()
	if _, n := second.take(); n != 1 {
		t.Errorf("the second admin got %d heartbeats in all; want 1: its id is known", n)
	}
}
