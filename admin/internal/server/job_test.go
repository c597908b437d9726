package server_test

import (
	"context"
	"net/http"
	"testing"

	"connectrpc.com/connect"
	"google.golang.org/protobuf/types/known/fieldmaskpb"

	"github.com/carillonhq/carillon/admin/client"
	"github.com/carillonhq/carillon/admin/internal/dbtest"
	carillonv1 "github.com/carillonhq/carillon/proto/carillon/v1"
	"github.com/carillonhq/carillon/proto/carillon/v1/carillonv1connect"
)

func jobClient(b *bundle) carillonv1connect.JobServiceClient {
	return carillonv1connect.NewJobServiceClient(http.DefaultClient, b.url, client.WithToken(b.admin))
}

func createJobs(t *testing.T, b *bundle, n int) (int64, []*carillonv1.Job) {
	t.Helper()
	ctx := context.Background()
	g, err := b.group.CreateGroup(ctx, &carillonv1.CreateGroupRequest{Group: &carillonv1.Group{AppName: "app"}})
	if err != nil {
		t.Fatal(err)
	}
	var jobs []*carillonv1.Job
	for range n {
		res, err := jobClient(b).CreateJob(ctx, &carillonv1.CreateJobRequest{Job: &carillonv1.Job{
			GroupId: g.Group.Id, Description: "d", Handler: "h", Param: "p",
			Schedule: &carillonv1.Schedule{Type: carillonv1.ScheduleType_SCHEDULE_TYPE_FIX_RATE, IntervalSeconds: 60},
		}})
		if err != nil {
			t.Fatal(err)
		}
		jobs = append(jobs, res.Job)
	}
	return g.Group.Id, jobs
}

func TestListJobsPages(t *testing.T) {
	t.Parallel()
	dbtest.Backends(t, func(t *testing.T, be dbtest.Backend) {
		b := setup(t, be, "")
		_, jobs := createJobs(t, b, 5)
		var got []int64
		token := ""
		for pages := 0; ; pages++ {
			if pages > 3 {
				t.Fatal("more than 3 pages of 2 for 5 jobs")
			}
			res, err := jobClient(b).ListJobs(context.Background(), &carillonv1.ListJobsRequest{PageSize: 2, PageToken: token})
			if err != nil {
				t.Fatal(err)
			}
			for _, j := range res.Jobs {
				got = append(got, j.Id)
			}
			if token = res.NextPageToken; token == "" {
				break
			}
		}
		if len(got) != len(jobs) {
			t.Fatalf("paged through %v, want the %d jobs", got, len(jobs))
		}
		for i, j := range jobs {
			if got[i] != j.Id {
				t.Errorf("item %d = job %d, want %d", i, got[i], j.Id)
			}
		}
		_, err := jobClient(b).ListJobs(context.Background(), &carillonv1.ListJobsRequest{PageSize: 501})
		if connect.CodeOf(err) != connect.CodeInvalidArgument {
			t.Errorf("page_size 501: got %v, want invalid_argument", err)
		}
	})
}

func TestUpdateJobMask(t *testing.T) {
	t.Parallel()
	dbtest.Backends(t, func(t *testing.T, be dbtest.Backend) {
		ctx := context.Background()
		b := setup(t, be, "")
		_, jobs := createJobs(t, b, 1)
		j := jobs[0]

		res, err := jobClient(b).UpdateJob(ctx, &carillonv1.UpdateJobRequest{
			Job:        &carillonv1.Job{Id: j.Id, Param: "new", Schedule: &carillonv1.Schedule{IntervalSeconds: 30}},
			UpdateMask: &fieldmaskpb.FieldMask{Paths: []string{"param", "schedule.interval_seconds"}},
		})
		if err != nil {
			t.Fatal(err)
		}
		if res.Job.Param != "new" || res.Job.Schedule.IntervalSeconds != 30 ||
			res.Job.Handler != "h" || res.Job.Schedule.Type != carillonv1.ScheduleType_SCHEDULE_TYPE_FIX_RATE {
			t.Errorf("after masked update: %v", res.Job)
		}

		for _, tt := range []struct {
			name string
			req  *carillonv1.UpdateJobRequest
		}{
			{"UnknownPath", &carillonv1.UpdateJobRequest{Job: &carillonv1.Job{Id: j.Id}, UpdateMask: &fieldmaskpb.FieldMask{Paths: []string{"nope"}}}},
			{"OutputOnly", &carillonv1.UpdateJobRequest{Job: &carillonv1.Job{Id: j.Id}, UpdateMask: &fieldmaskpb.FieldMask{Paths: []string{"next_fire_at"}}}},
			{"ClearsRequiredField", &carillonv1.UpdateJobRequest{Job: &carillonv1.Job{Id: j.Id}, UpdateMask: &fieldmaskpb.FieldMask{Paths: []string{"handler"}}}},
			{"FullReplaceMissingFields", &carillonv1.UpdateJobRequest{Job: &carillonv1.Job{Id: j.Id, Param: "x"}}},
		} {
			_, err := jobClient(b).UpdateJob(ctx, tt.req)
			if connect.CodeOf(err) != connect.CodeInvalidArgument {
				t.Errorf("%s: got %v, want invalid_argument", tt.name, err)
			}
		}
		got, err := jobClient(b).GetJob(ctx, &carillonv1.GetJobRequest{Id: j.Id})
		if err != nil {
			t.Fatal(err)
		}
		if got.Job.Param != "new" || got.Job.Handler != "h" {
			t.Errorf("a refused update changed the job: %v", got.Job)
		}
		if _, err := jobClient(b).UpdateJob(ctx, &carillonv1.UpdateJobRequest{Job: &carillonv1.Job{Id: 999, Param: "x"}}); connect.CodeOf(err) != connect.CodeNotFound {
			t.Errorf("update of a missing job: got %v, want not_found", err)
		}
	})
}
