package sdk

import (
	"context"
	"errors"
	"net/http"
	"sync"
	"testing"
	"time"

	"connectrpc.com/connect"

	"github.com/carillonhq/carillon/internal/testkit"
	carillonv1 "github.com/carillonhq/carillon/proto/carillon/v1"
	"github.com/carillonhq/carillon/proto/carillon/v1/carillonv1connect"
	"github.com/carillonhq/carillon/sdk/internal/report"
)

// flakyRegistry is a real RegistryService that refuses the first
// refuseReports ReportResults calls as unavailable and answers every other
// call.
type flakyRegistry struct {
	carillonv1connect.UnimplementedRegistryServiceHandler

	mu            sync.Mutex
	refuseReports int
	refused       chan struct{} // gets one value per refused report
	delivered     chan int64    // gets each delivered run id
}

func (f *flakyRegistry) Register(context.Context, *carillonv1.RegisterRequest) (*carillonv1.RegisterResponse, error) {
	return &carillonv1.RegisterResponse{}, nil
}

func (f *flakyRegistry) ReportResults(_ context.Context, req *carillonv1.ReportResultsRequest) (*carillonv1.ReportResultsResponse, error) {
	f.mu.Lock()
	refuse := f.refuseReports > 0
	f.refuseReports--
	f.mu.Unlock()
	if refuse {
		f.refused <- struct{}{}
		return nil, connect.NewError(connect.CodeUnavailable, errors.New("flaky registry: refusing this report"))
	}
	for _, r := range req.GetResults() {
		f.delivered <- r.GetRunId()
	}
	return &carillonv1.ReportResultsResponse{}, nil
}

// TestReporterRetriesWhenAHeartbeatGetsThrough: a reporter backing off for
// a minute after a failed report retries the moment a heartbeat to the
// admin succeeds, instead of at the end of its minute.
func TestReporterRetriesWhenAHeartbeatGetsThrough(t *testing.T) {
	t.Parallel()
	reg := &flakyRegistry{refuseReports: 1, refused: make(chan struct{}, 10), delivered: make(chan int64, 10)}
	url := testkit.ServeRegistry(t, reg)

	logger := testkit.Logger(t)
	sp, err := report.OpenSpool(t.TempDir(), logger)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sp.Close() })
	adm := newAdmins([]string{url}, http.DefaultClient, "", "i")
	rep := report.NewReporter(sp, adm.reportResults, logger)
	rep.BackoffMin = report.BackoffMax // the first failure waits a minute or more
	adm.answered = rep.AdminAnswered

	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() { rep.Run(t.Context(), stop) })
	t.Cleanup(func() { close(stop); wg.Wait() })

	rep.Add(report.NewResult(1, carillonv1.RunStatus_RUN_STATUS_SUCCEEDED, "", time.Now()))
	select {
	case <-reg.refused: // the reporter now backs off for at least a minute
	case <-time.After(30 * time.Second):
		t.Fatal("the reporter never sent its result")
	}

	hbCtx, stopHB := context.WithCancel(t.Context())
	wg.Go(func() { heartbeat(hbCtx, adm, "test", "http://127.0.0.1:1", "instance", time.Hour, logger) })
	defer stopHB()
	// Far below the minute of backoff, far above what the retry takes.
	const bound = 10 * time.Second
	select {
	case id := <-reg.delivered:
		if id != 1 {
			t.Errorf("delivered run %d, want 1", id)
		}
	case <-time.After(bound):
		t.Fatalf("result not delivered within %v of a successful heartbeat (the backoff was %v)", bound, report.BackoffMax)
	}
}
