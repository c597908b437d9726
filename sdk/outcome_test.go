package sdk

import (
	"context"
	"log/slog"
	"maps"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/carillonhq/carillon/internal/testkit"
	carillonv1 "github.com/carillonhq/carillon/proto/carillon/v1"
	"github.com/carillonhq/carillon/proto/carillon/v1/carillonv1connect"
	"github.com/carillonhq/carillon/sdk/internal/report"
)

// judgingRegistry is a real RegistryService that takes each result of a
// ReportResults call but those judge refuses, in their outcomes, as an
// admin does.
type judgingRegistry struct {
	carillonv1connect.UnimplementedRegistryServiceHandler

	// judge returns the code and message of the outcome of r in call
	// number call (from 1); an empty code takes r.
	judge func(call int, r *carillonv1.RunResult) (code, message string)

	mu    sync.Mutex
	n     int           // calls so far
	sent  map[int64]int // how many times each run was sent
	calls chan []int64  // gets the run ids of each call
}

func newJudgingRegistry(t *testing.T, judge func(int, *carillonv1.RunResult) (string, string)) (*judgingRegistry, string) {
	t.Helper()
	reg := &judgingRegistry{judge: judge, sent: make(map[int64]int), calls: make(chan []int64, 100)}
	return reg, testkit.ServeRegistry(t, reg)
}

func (g *judgingRegistry) ReportResults(_ context.Context, req *carillonv1.ReportResultsRequest) (*carillonv1.ReportResultsResponse, error) {
	g.mu.Lock()
	g.n++
	call := g.n
	res := &carillonv1.ReportResultsResponse{}
	var ids []int64
	for _, r := range req.GetResults() {
		g.sent[r.GetRunId()]++
		ids = append(ids, r.GetRunId())
		code, msg := g.judge(call, r)
		res.Outcomes = append(res.Outcomes, &carillonv1.ResultOutcome{RunId: r.GetRunId(), Code: code, Message: msg})
	}
	g.mu.Unlock()
	g.calls <- ids
	return res, nil
}

// sentCounts returns how many times each run was sent.
func (g *judgingRegistry) sentCounts() map[int64]int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return maps.Clone(g.sent)
}

// nextCall waits for the next ReportResults call and returns its run ids.
func (g *judgingRegistry) nextCall(t *testing.T) []int64 {
	t.Helper()
	select {
	case ids := <-g.calls:
		return ids
	case <-time.After(30 * time.Second):
		t.Fatal("no ReportResults call within 30s")
		return nil
	}
}

// reportingTo returns a reporter, spooling in dir, that sends to the
// registry at url, logging to logs; backoffs start at a millisecond.
func reportingTo(t *testing.T, url, dir string, logs *testkit.LogBuffer) *report.Reporter {
	t.Helper()
	logger := slog.New(slog.NewTextHandler(logs, nil))
	sp, err := report.OpenSpool(dir, logger)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sp.Close() })
	adm := newAdmins([]string{url}, http.DefaultClient, "", "i")
	rep := report.NewReporter(sp, adm.reportResults, logger)
	rep.BackoffMin = time.Millisecond
	adm.answered = rep.AdminAnswered
	return rep
}

const malformedStatus = "results[1].status: must be a final status (SUCCEEDED, FAILED, TIMED_OUT or KILLED), got RUN_STATUS_RUNNING"

// TestReporterDropsMalformedResults: a result the admin refuses as
// invalid_argument is dropped from the spool, with a warning naming the run
// and the reason, and never sent again; the others of its batch are
// acknowledged.
func TestReporterDropsMalformedResults(t *testing.T) {
	t.Parallel()
	reg, url := newJudgingRegistry(t, func(_ int, r *carillonv1.RunResult) (string, string) {
		if r.GetStatus() == carillonv1.RunStatus_RUN_STATUS_RUNNING {
			return "invalid_argument", malformedStatus
		}
		return "", ""
	})
	dir := t.TempDir()
	var logs testkit.LogBuffer
	rep := reportingTo(t, url, dir, &logs)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() { rep.Run(t.Context(), stop) })

	now := time.Now()
	rep.AddAll([]report.Result{
		report.NewResult(1, carillonv1.RunStatus_RUN_STATUS_SUCCEEDED, "", now),
		report.NewResult(2, carillonv1.RunStatus_RUN_STATUS_RUNNING, "", now), // malformed
		report.NewResult(3, carillonv1.RunStatus_RUN_STATUS_FAILED, "no", now),
	})
	if ids := reg.nextCall(t); len(ids) != 3 {
		t.Fatalf("first call sent runs %v, want 1, 2 and 3 in one batch", ids)
	}
	// A later result goes in a later call, with run 2 if it were kept.
	rep.Add(report.NewResult(4, carillonv1.RunStatus_RUN_STATUS_SUCCEEDED, "", now))
	if ids := reg.nextCall(t); !cmp.Equal(ids, []int64{4}) {
		t.Errorf("second call sent runs %v, want 4 alone", ids)
	}
	close(stop) // lets the call under way finish, and its acknowledgement
	wg.Wait()

	if diff := cmp.Diff(map[int64]int{1: 1, 2: 1, 3: 1, 4: 1}, reg.sentCounts()); diff != "" {
		t.Errorf("times each run was sent (-want +got):\n%s", diff)
	}
	if n := rep.Pending(); n != 0 {
		t.Errorf("%d results still queued, want none", n)
	}
	if n := unacknowledged(t, dir); n != 0 {
		t.Errorf("%d results left unacknowledged in the spool, want none (the malformed one dropped)", n)
	}
	var warnings []string
	for line := range strings.Lines(logs.String()) {
		if strings.Contains(line, "level=WARN") && strings.Contains(line, "dropped") {
			warnings = append(warnings, line)
		}
	}
	if len(warnings) != 1 || !strings.Contains(warnings[0], " run=2 ") || !strings.Contains(warnings[0], malformedStatus) {
		t.Errorf("warnings of dropped results:\n%s\nwant one naming run=2 and the reason %q\nlog:\n%s", warnings, malformedStatus, logs.String())
	}
}

// TestReporterRetriesResultsTheAdminCouldNotTake: a result refused with
// any other code than invalid_argument is sent again until it is taken,
// and flush leaves it in the spool; the others of its batch are not sent
// again.
func TestReporterRetriesResultsTheAdminCouldNotTake(t *testing.T) {
	t.Parallel()
	// Run 2 is refused for now in the first two calls.
	judge := func(call int, r *carillonv1.RunResult) (string, string) {
		if r.GetRunId() == 2 && call <= 2 {
			return "unavailable", "busy"
		}
		return "", ""
	}
	now := time.Now()
	results := []report.Result{
		report.NewResult(1, carillonv1.RunStatus_RUN_STATUS_SUCCEEDED, "", now),
		report.NewResult(2, carillonv1.RunStatus_RUN_STATUS_SUCCEEDED, "", now),
		report.NewResult(3, carillonv1.RunStatus_RUN_STATUS_FAILED, "no", now),
	}

	t.Run("Run", func(t *testing.T) {
		t.Parallel()
		reg, url := newJudgingRegistry(t, judge)
		dir := t.TempDir()
		var logs testkit.LogBuffer
		rep := reportingTo(t, url, dir, &logs)
		stop := make(chan struct{})
		var wg sync.WaitGroup
		wg.Go(func() { rep.Run(t.Context(), stop) })

		rep.AddAll(results)
		var calls [][]int64
		for range 3 {
			calls = append(calls, reg.nextCall(t))
		}
		close(stop)
		wg.Wait()
		if diff := cmp.Diff([][]int64{{1, 2, 3}, {2}, {2}}, calls); diff != "" {
			t.Errorf("run ids of each call (-want +got):\n%s", diff)
		}
		if n := unacknowledged(t, dir); n != 0 {
			t.Errorf("%d results left unacknowledged in the spool, want none", n)
		}
		if strings.Contains(logs.String(), "dropped") {
			t.Errorf("a result was dropped:\n%s", logs.String())
		}
	})

	t.Run("Flush", func(t *testing.T) {
		t.Parallel()
		reg, url := newJudgingRegistry(t, judge)
		dir := t.TempDir()
		rep := reportingTo(t, url, dir, new(testkit.LogBuffer))
		rep.AddAll(results)
		if err := rep.Flush(t.Context()); err == nil || !strings.Contains(err.Error(), "busy") {
			t.Errorf("flush: %v, want an error saying the admin could not take a result (busy)", err)
		}
		if diff := cmp.Diff(map[int64]int{1: 1, 2: 1, 3: 1}, reg.sentCounts()); diff != "" {
			t.Errorf("times each run was sent (-want +got):\n%s", diff)
		}
		if n := unacknowledged(t, dir); n != 1 {
			t.Errorf("%d results left unacknowledged in the spool, want 1 (run 2, for the next start)", n)
		}
	})
}

// TestReporterSetsAsideResultsTheAdminCouldNotTake: a result the admin
// could not take for now waits out its backoff aside; results that end
// meanwhile are sent at once, not behind it (a result refused after an
// admin restart once held its executor's later results up for half a
// minute, and a workflow's next nodes with them).
func TestReporterSetsAsideResultsTheAdminCouldNotTake(t *testing.T) {
	t.Parallel()
	reg, url := newJudgingRegistry(t, func(_ int, r *carillonv1.RunResult) (string, string) {
		if r.GetRunId() == 1 {
			return "permission_denied", "was sent to another executor"
		}
		return "", ""
	})
	rep := reportingTo(t, url, t.TempDir(), new(testkit.LogBuffer))
	rep.BackoffMin = report.BackoffMax // run 1 waits a minute or more before it is sent again
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() { rep.Run(t.Context(), stop) })
	defer func() { close(stop); wg.Wait() }()

	now := time.Now()
	rep.Add(report.NewResult(1, carillonv1.RunStatus_RUN_STATUS_SUCCEEDED, "", now))
	if ids := reg.nextCall(t); !cmp.Equal(ids, []int64{1}) {
		t.Fatalf("first call sent runs %v, want 1", ids)
	}
	rep.Add(report.NewResult(2, carillonv1.RunStatus_RUN_STATUS_SUCCEEDED, "", now))
	if ids := reg.nextCall(t); !cmp.Equal(ids, []int64{2}) { // nextCall fails after 30 s, well within run 1's minute
		t.Errorf("second call sent runs %v, want 2 alone: run 1 waits aside", ids)
	}
	// Run 2's acknowledgement lands just after its call.
	deadline := time.Now().Add(10 * time.Second)
	for rep.Pending() != 1 && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	if n := rep.Pending(); n != 1 {
		t.Errorf("%d results pending, want 1 (run 1, aside)", n)
	}
}

// TestRefusalsOf: an admin's outcomes become refusals only when they match
// the batch one to one, in order.
func TestRefusalsOf(t *testing.T) {
	t.Parallel()
	now := time.Now()
	batch := []report.Result{
		report.NewResult(1, carillonv1.RunStatus_RUN_STATUS_SUCCEEDED, "", now),
		report.NewResult(2, carillonv1.RunStatus_RUN_STATUS_RUNNING, "", now),
	}
	taken := func(id int64) *carillonv1.ResultOutcome { return &carillonv1.ResultOutcome{RunId: id} }
	bad := &carillonv1.ResultOutcome{RunId: 2, Code: "invalid_argument", Message: malformedStatus}
	for _, c := range []struct {
		name     string
		outcomes []*carillonv1.ResultOutcome
		want     []report.Refusal
		wantErr  bool
	}{
		{name: "NoneFromAnOlderAdmin"},
		{name: "AllTaken", outcomes: []*carillonv1.ResultOutcome{taken(1), taken(2)}},
		{name: "OneRefused", outcomes: []*carillonv1.ResultOutcome{taken(1), bad}, want: []report.Refusal{{}, {Code: "invalid_argument", Message: malformedStatus}}},
		{name: "TooFew", outcomes: []*carillonv1.ResultOutcome{taken(1)}, wantErr: true},
		{name: "OutOfOrder", outcomes: []*carillonv1.ResultOutcome{bad, taken(1)}, wantErr: true},
	} {
		got, err := refusalsOf(batch, c.outcomes)
		if (err != nil) != c.wantErr {
			t.Errorf("%s: error %v, want one: %v", c.name, err, c.wantErr)
		}
		if diff := cmp.Diff(c.want, got, cmp.AllowUnexported(report.Refusal{})); diff != "" {
			t.Errorf("%s: refusals (-want +got):\n%s", c.name, diff)
		}
	}
}

// unacknowledged counts the results left unacknowledged in the spool in
// dir, as a new process would find them.
func unacknowledged(t *testing.T, dir string) int {
	t.Helper()
	n, err := report.Unacknowledged(dir)
	if err != nil {
		t.Fatal(err)
	}
	return n
}
