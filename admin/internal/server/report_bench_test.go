package server_test

import (
	"context"
	"testing"

	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/carillonhq/carillon/admin/internal/dbtest"
	carillonv1 "github.com/carillonhq/carillon/proto/carillon/v1"
)

// BenchmarkReportResults reports a batch of 100 results over loopback, as
// an executor's spool does, through the RegistryService's interceptors
// (executor token, request shape) to the store: results for runs the admin
// does not have, so that each call reads the runs and writes nothing, and
// the request's checks weigh as much as they can.
func BenchmarkReportResults(b *testing.B) {
	bn := setup(b, dbtest.SQLite, "s3cret")
	ctx := context.Background()
	now := timestamppb.New(bn.clock.Now())
	req := &carillonv1.ReportResultsRequest{InstanceId: "instance-a"}
	for i := range 100 {
		req.Results = append(req.Results, &carillonv1.RunResult{RunId: int64(1_000_000 + i),
			Status: carillonv1.RunStatus_RUN_STATUS_SUCCEEDED, Message: "done", FinishedAt: now})
	}
	b.ReportAllocs()
	for b.Loop() {
		res, err := bn.registry.ReportResults(ctx, req)
		if err != nil {
			b.Fatal(err)
		}
		if len(res.Outcomes) != len(req.Results) {
			b.Fatalf("%d outcomes for %d results", len(res.Outcomes), len(req.Results))
		}
	}
}
