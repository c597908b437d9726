package server_test

import (
	"context"
	"testing"
	"time"

	"connectrpc.com/connect"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/carillonhq/carillon/admin/internal/dbtest"
	carillonv1 "github.com/carillonhq/carillon/proto/carillon/v1"
)

// TestTriggerTypeOfCredential: TriggerJob called with an API token (a
// program) records TRIGGER_TYPE_API, with a session (a person) MANUAL.
func TestTriggerTypeOfCredential(t *testing.T) {
	t.Parallel()
	dbtest.Backends(t, func(t *testing.T, be dbtest.Backend) {
		ctx := context.Background()
		f := newFixture(t, be)
		login, err := f.as["admin"].user.Login(ctx, &carillonv1.LoginRequest{Username: "root", Password: passwordOf("root")})
		if err != nil {
			t.Fatal(err)
		}
		for _, tt := range []struct {
			name string
			c    mgmt
			want carillonv1.TriggerType
		}{
			{"APIToken", f.as["admin"], carillonv1.TriggerType_TRIGGER_TYPE_API},
			{"Session", clientsOf(f.url, login.Token), carillonv1.TriggerType_TRIGGER_TYPE_MANUAL},
		} {
			res, err := tt.c.job.TriggerJob(ctx, &carillonv1.TriggerJobRequest{JobId: f.jobA})
			if err != nil {
				t.Fatal(err)
			}
			run, err := tt.c.run.GetRun(ctx, &carillonv1.GetRunRequest{Id: res.RunIds[0]})
			if err != nil {
				t.Fatal(err)
			}
			if run.Run.TriggerType != tt.want {
				t.Errorf("%s: trigger type %s, want %s", tt.name, run.Run.TriggerType, tt.want)
			}
		}
	})
}

// TestPreviewOutOfRange: a preview whose fires would pass the end of year
// 9999 stops there, and a from that no timestamp holds is invalid_argument,
// never internal.
func TestPreviewOutOfRange(t *testing.T) {
	t.Parallel()
	dbtest.Backends(t, func(t *testing.T, be dbtest.Backend) {
		ctx := context.Background()
		f := newFixture(t, be)
		c := f.as["viewer"].job
		rate := &carillonv1.Schedule{Type: carillonv1.ScheduleType_SCHEDULE_TYPE_FIX_RATE, IntervalSeconds: 3600}
		from := time.Date(9999, 12, 31, 21, 30, 0, 0, time.UTC)
		res, err := c.PreviewSchedule(ctx, &carillonv1.PreviewScheduleRequest{Schedule: rate, From: timestamppb.New(from), Count: 5})
		if err != nil {
			t.Fatalf("preview near the end of 9999: %v, want the fires before it", err)
		}
		if len(res.FireTimes) != 2 {
			t.Errorf("preview near the end of 9999: %d fires, want 2 (22:30 and 23:30)", len(res.FireTimes))
		}
		_, err = c.PreviewSchedule(ctx, &carillonv1.PreviewScheduleRequest{Schedule: rate, From: &timestamppb.Timestamp{Seconds: 253402300800 + 86400}})
		if connect.CodeOf(err) != connect.CodeInvalidArgument {
			t.Errorf("preview from year 10000: %v, want invalid_argument", err)
		}
	})
}
