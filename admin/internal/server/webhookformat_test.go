package server_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"connectrpc.com/connect"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/fieldmaskpb"

	"github.com/carillonhq/carillon/admin/client"
	"github.com/carillonhq/carillon/admin/internal/dbtest"
	carillonv1 "github.com/carillonhq/carillon/proto/carillon/v1"
	"github.com/carillonhq/carillon/proto/carillon/v1/carillonv1connect"
)

// TestWebhookSecretWriteOnly: a job's alarm webhook secret is stored but
// never returned (GetJob, ListJobs, the responses, the audit log), only
// has_alarm_webhook_secret; an update keeps it unless its mask names it.
func TestWebhookSecretWriteOnly(t *testing.T) {
	t.Parallel()
	dbtest.Backends(t, func(t *testing.T, be dbtest.Backend) {
		ctx := context.Background()
		b := setup(t, be, "")
		groupID, _ := createJobs(t, b, 0)
		jobs := jobClient(b)
		const secret = "SECdeadbeef-never-shown"
		created, err := jobs.CreateJob(ctx, &carillonv1.CreateJobRequest{Job: &carillonv1.Job{
			GroupId: groupID, Description: "d", Handler: "h",
			Schedule:        &carillonv1.Schedule{Type: carillonv1.ScheduleType_SCHEDULE_TYPE_NONE},
			AlarmWebhookUrl: "https://oapi.dingtalk.com/robot/send?access_token=t", AlarmWebhookSecret: secret,
			AlarmWebhookFormat: carillonv1.AlarmWebhookFormat_ALARM_WEBHOOK_FORMAT_DINGTALK,
		}})
		if err != nil {
			t.Fatal(err)
		}
		id := created.Job.Id
		stored := func() string {
			t.Helper()
			j, err := b.store.Jobs.Get(ctx, id)
			if err != nil {
				t.Fatal(err)
			}
			return j.AlarmWebhookSecret
		}
		shown := func(what string, m proto.Message, wantHas bool) {
			t.Helper()
			b, _ := protojson.Marshal(m)
			if strings.Contains(string(b), secret) {
				t.Errorf("%s returns the secret: %s", what, b)
			}
			var j *carillonv1.Job
			switch m := m.(type) {
			case *carillonv1.GetJobResponse:
				j = m.Job
			case *carillonv1.ListJobsResponse:
				j = m.Jobs[0]
			case *carillonv1.UpdateJobResponse:
				j = m.Job
			case *carillonv1.CreateJobResponse:
				j = m.Job
			}
			if j.HasAlarmWebhookSecret != wantHas || j.AlarmWebhookSecret != "" {
				t.Errorf("%s: has_alarm_webhook_secret %v, secret %q; want %v and none", what, j.HasAlarmWebhookSecret, j.AlarmWebhookSecret, wantHas)
			}
		}
		shown("CreateJob", created, true)
		got, err := jobs.GetJob(ctx, &carillonv1.GetJobRequest{Id: id})
		if err != nil {
			t.Fatal(err)
		}
		shown("GetJob", got, true)
		list, err := jobs.ListJobs(ctx, &carillonv1.ListJobsRequest{})
		if err != nil {
			t.Fatal(err)
		}
		shown("ListJobs", list, true)

		// A mask that does not name it, and a job sent back whole as
		// read (no mask), keep it.
		upd, err := jobs.UpdateJob(ctx, &carillonv1.UpdateJobRequest{Job: &carillonv1.Job{Id: id, Description: "d2"},
			UpdateMask: &fieldmaskpb.FieldMask{Paths: []string{"description"}}})
		if err != nil {
			t.Fatal(err)
		}
		shown("UpdateJob", upd, true)
		whole := got.Job
		whole.Description = "d3"
		if _, err := jobs.UpdateJob(ctx, &carillonv1.UpdateJobRequest{Job: whole}); err != nil {
			t.Fatal(err)
		}
		if s := stored(); s != secret {
			t.Fatalf("after updates that do not name it, the stored secret is %q", s)
		}
		// Naming it with "" clears it.
		upd, err = jobs.UpdateJob(ctx, &carillonv1.UpdateJobRequest{Job: &carillonv1.Job{Id: id},
			UpdateMask: &fieldmaskpb.FieldMask{Paths: []string{"alarm_webhook_secret"}}})
		if err != nil {
			t.Fatal(err)
		}
		shown("UpdateJob clearing it", upd, false)
		if s := stored(); s != "" {
			t.Errorf("after clearing, the stored secret is %q", s)
		}

		// An import's jobs (a repeated field) are redacted too.
		if _, err := jobs.ImportJobs(ctx, &carillonv1.ImportJobsRequest{
			Groups: []*carillonv1.Group{{Id: 1, AppName: "imported"}},
			Jobs: []*carillonv1.Job{{Id: 1, GroupId: 1, Description: "d", Handler: "h", AlarmWebhookSecret: secret,
				Schedule:           &carillonv1.Schedule{Type: carillonv1.ScheduleType_SCHEDULE_TYPE_NONE},
				AlarmWebhookFormat: carillonv1.AlarmWebhookFormat_ALARM_WEBHOOK_FORMAT_DINGTALK}}, // (webhook URLs are not imported)
		}); err != nil {
			t.Fatal(err)
		}
		audit, err := carillonv1connect.NewUserServiceClient(http.DefaultClient, b.url, client.WithToken(b.admin)).
			ListAuditLog(ctx, &carillonv1.ListAuditLogRequest{})
		if err != nil {
			t.Fatal(err)
		}
		if len(audit.Entries) < 5 {
			t.Fatalf("%d audit entries, want the create, 3 updates and the import", len(audit.Entries))
		}
		for _, e := range audit.Entries {
			if strings.Contains(e.Detail, secret) {
				t.Errorf("audit entry %s keeps the secret: %s", e.Action, e.Detail)
			}
		}
	})
}

// TestWebhookFormatRefused: a bad format, template or secret is
// invalid_argument naming the field and the rule, and changes nothing.
func TestWebhookFormatRefused(t *testing.T) {
	t.Parallel()
	dbtest.Backends(t, func(t *testing.T, be dbtest.Backend) {
		ctx := context.Background()
		b := setup(t, be, "")
		_, js := createJobs(t, b, 1)
		jobs := jobClient(b)
		before, err := b.store.Jobs.Get(ctx, js[0].Id)
		if err != nil {
			t.Fatal(err)
		}
		const (
			format   = carillonv1.AlarmWebhookFormat_ALARM_WEBHOOK_FORMAT_TEMPLATE
			slack    = carillonv1.AlarmWebhookFormat_ALARM_WEBHOOK_FORMAT_SLACK
			dingTalk = carillonv1.AlarmWebhookFormat_ALARM_WEBHOOK_FORMAT_DINGTALK
		)
		for _, tt := range []struct {
			name  string
			job   *carillonv1.Job
			paths []string
			want  string
		}{
			{"template missing", &carillonv1.Job{AlarmWebhookFormat: format}, []string{"alarm_webhook_format"}, "job.alarm_webhook_template: required with ALARM_WEBHOOK_FORMAT_TEMPLATE"},
			{"template does not parse", &carillonv1.Job{AlarmWebhookFormat: format, AlarmWebhookTemplate: "{{.Status"},
				[]string{"alarm_webhook_format", "alarm_webhook_template"}, "job.alarm_webhook_template: not a template that renders an alarm"},
			{"template names no field", &carillonv1.Job{AlarmWebhookFormat: format, AlarmWebhookTemplate: "{{.Nope}}"},
				[]string{"alarm_webhook_format", "alarm_webhook_template"}, "can't evaluate field Nope"},
			{"template without its format", &carillonv1.Job{AlarmWebhookFormat: dingTalk, AlarmWebhookTemplate: "{{.Status}}"},
				[]string{"alarm_webhook_format", "alarm_webhook_template"}, "job.alarm_webhook_template: used only with ALARM_WEBHOOK_FORMAT_TEMPLATE"},
			{"secret where the format does not sign", &carillonv1.Job{AlarmWebhookFormat: slack, AlarmWebhookSecret: "s"},
				[]string{"alarm_webhook_format", "alarm_webhook_secret"}, "job.alarm_webhook_secret: ALARM_WEBHOOK_FORMAT_SLACK does not sign"},
			{"undefined format", &carillonv1.Job{AlarmWebhookFormat: 99}, []string{"alarm_webhook_format"}, "alarm_webhook_format"},
		} {
			tt.job.Id = js[0].Id
			_, err := jobs.UpdateJob(ctx, &carillonv1.UpdateJobRequest{Job: tt.job, UpdateMask: &fieldmaskpb.FieldMask{Paths: tt.paths}})
			if connect.CodeOf(err) != connect.CodeInvalidArgument || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("%s: %v, want invalid_argument saying %q", tt.name, err, tt.want)
			}
			// CreateJob refuses it the same.
			create := proto.Clone(js[0]).(*carillonv1.Job)
			create.Id = 0
			proto.Merge(create, tt.job)
			create.Id = 0
			if _, err := jobs.CreateJob(ctx, &carillonv1.CreateJobRequest{Job: create}); connect.CodeOf(err) != connect.CodeInvalidArgument ||
				!strings.Contains(err.Error(), tt.want) {
				t.Errorf("%s: CreateJob %v, want invalid_argument saying %q", tt.name, err, tt.want)
			}
		}
		after, err := b.store.Jobs.Get(ctx, js[0].Id)
		if err != nil {
			t.Fatal(err)
		}
		if !after.UpdatedAt.Equal(before.UpdatedAt) || after.AlarmWebhookFormat != before.AlarmWebhookFormat {
			t.Errorf("a refused update changed the job: %+v", after)
		}
		if list, err := jobs.ListJobs(ctx, &carillonv1.ListJobsRequest{}); err != nil || len(list.Jobs) != 1 {
			t.Errorf("a refused create stored a job: %v, %v", list, err)
		}
	})
}
