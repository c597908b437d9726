package server_test

import (
	"context"
	"strings"
	"testing"

	"connectrpc.com/connect"
	"google.golang.org/protobuf/types/known/fieldmaskpb"

	"github.com/carillonhq/carillon/admin/internal/dbtest"
	carillonv1 "github.com/carillonhq/carillon/proto/carillon/v1"
)

// TestParamTemplateChecked: a job whose param is a template is refused
// (invalid_argument naming job.param, nothing stored) unless the template
// parses with text/template's builtins only; braces in a param that is not
// a template are left alone; TriggerJob's param override of a template job
// is checked the same way.
func TestParamTemplateChecked(t *testing.T) {
	t.Parallel()
	dbtest.Backends(t, func(t *testing.T, be dbtest.Backend) {
		ctx := context.Background()
		b := setup(t, be, "")
		group, jobs := createJobs(t, b, 1)
		plain := jobs[0]
		job := func(param string, template bool) *carillonv1.Job {
			return &carillonv1.Job{GroupId: group, Description: "d", Handler: "h", Param: param, ParamTemplate: template,
				Schedule: &carillonv1.Schedule{Type: carillonv1.ScheduleType_SCHEDULE_TYPE_FIX_RATE, IntervalSeconds: 60, TimeZone: "Asia/Shanghai"}}
		}
		refused := func(what, field string, err error) {
			t.Helper()
			if connect.CodeOf(err) != connect.CodeInvalidArgument || !strings.Contains(err.Error(), field) {
				t.Errorf("%s: got %v, want invalid_argument naming %s", what, err, field)
			}
		}
		for _, bad := range []string{`{{.ScheduledAt`, `{{env "HOME"}}`, `{{range 9}}{{end}}`} {
			_, err := jobClient(b).CreateJob(ctx, &carillonv1.CreateJobRequest{Job: job(bad, true)})
			refused("CreateJob "+bad, "job.param", err)
		}
		if _, err := jobClient(b).CreateJob(ctx, &carillonv1.CreateJobRequest{Job: job(`{{ literal`, false)}); err != nil {
			t.Errorf("a param with braces that is not a template: %v", err)
		}
		res, err := jobClient(b).CreateJob(ctx, &carillonv1.CreateJobRequest{Job: job(`{{.ScheduledAt.Format "20060102"}}`, true)})
		if err != nil {
			t.Fatal(err)
		}
		if !res.Job.ParamTemplate {
			t.Error("the created job does not say its param is a template")
		}
		list, err := jobClient(b).ListJobs(ctx, &carillonv1.ListJobsRequest{})
		if err != nil {
			t.Fatal(err)
		}
		if len(list.Jobs) != 3 {
			t.Errorf("%d jobs stored, want 3: the refused ones are not", len(list.Jobs))
		}

		// Marking a param with a broken template as one is refused; the
		// job stays as it was.
		_, err = jobClient(b).UpdateJob(ctx, &carillonv1.UpdateJobRequest{
			Job:        &carillonv1.Job{Id: plain.Id, Param: "{{", ParamTemplate: true},
			UpdateMask: &fieldmaskpb.FieldMask{Paths: []string{"param", "param_template"}},
		})
		refused("UpdateJob", "job.param", err)
		if got, err := jobClient(b).GetJob(ctx, &carillonv1.GetJobRequest{Id: plain.Id}); err != nil || got.Job.Param != "p" || got.Job.ParamTemplate {
			t.Errorf("a refused update changed the job: %v, %v", got.GetJob(), err)
		}

		bad := `{{.Nope`
		_, err = jobClient(b).TriggerJob(ctx, &carillonv1.TriggerJobRequest{JobId: res.Job.Id, Param: &bad})
		refused("TriggerJob", "param", err)
	})
}
