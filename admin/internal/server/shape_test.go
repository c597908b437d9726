package server

import (
	"strings"
	"testing"

	"buf.build/gen/go/bufbuild/protovalidate/protocolbuffers/go/buf/validate"
	"connectrpc.com/connect"
	"google.golang.org/protobuf/proto"

	"github.com/carillonhq/carillon/admin/internal/auth"
	carillonv1 "github.com/carillonhq/carillon/proto/carillon/v1"
)

// TestShapeMessages: a request that breaks a buf.validate rule is
// invalid_argument saying the field, by its proto path, the rule and what
// the request had, as the hand-written checks say it; a password's value is
// never said.
func TestShapeMessages(t *testing.T) {
	s := newShape()
	none := &carillonv1.Schedule{Type: carillonv1.ScheduleType_SCHEDULE_TYPE_NONE}
	for _, tt := range []struct {
		req  proto.Message
		want string
	}{
		{&carillonv1.CreateJobRequest{}, "job: required"},
		{&carillonv1.GetJobRequest{Id: -3}, "id: must be greater than 0, got -3"},
		{&carillonv1.CreateJobRequest{Job: &carillonv1.Job{Handler: strings.Repeat("h", 300), Schedule: none}},
			"job.handler: must be at most 255 bytes, got 300"},
		{&carillonv1.CreateJobRequest{Job: &carillonv1.Job{Schedule: none, ChildJobIds: []int64{4, 0}}},
			"job.child_job_ids[1]: must be greater than 0, got 0"},
		{&carillonv1.CreateJobRequest{Job: &carillonv1.Job{Schedule: none, AlarmEmails: make([]string, 21)}},
			"job.alarm_emails: must contain no more than 20 item(s), got 21"},
		{&carillonv1.CreateJobRequest{Job: &carillonv1.Job{Schedule: none, RouteStrategy: 99}},
			"job.route_strategy: must be one of the defined enum values, got 99"},
		{&carillonv1.CreateJobRequest{Job: &carillonv1.Job{Schedule: &carillonv1.Schedule{IntervalSeconds: -1}}},
			"job.schedule.interval_seconds: must be greater than or equal to 0 and less than or equal to 31622400, got -1"},
		{&carillonv1.CreateGroupRequest{Group: &carillonv1.Group{AppName: "has space"}},
			"group.app_name: does not match regex pattern `^[A-Za-z0-9._-]{1,64}$`, got \"has space\""},
		{&carillonv1.ChangePasswordRequest{OldPassword: "x", NewPassword: "secret"},
			"new_password: must be at least 8 bytes, got 6"},
	} {
		err := s.check(tt.req, nil)
		if connect.CodeOf(err) != connect.CodeInvalidArgument || err.(*connect.Error).Message() != tt.want {
			t.Errorf("%T %v: %v, want invalid_argument %q", tt.req, tt.req, err, tt.want)
		}
	}
	// What the rules allow passes: an update's job without the fields
	// CreateJob requires, a user with no username, no password.
	for _, req := range []proto.Message{
		&carillonv1.UpdateJobRequest{Job: &carillonv1.Job{Id: 1, Param: "x"}},
		&carillonv1.UpdateUserRequest{User: &carillonv1.User{Id: 1}},
		&carillonv1.ListRunsRequest{},
	} {
		if err := s.check(req, nil); err != nil {
			t.Errorf("%T %v: %v, want it to pass", req, req, err)
		}
	}
}

// TestImportNames: a broken rule of an imported group or job is named with
// its source id, as ImportJobs's other errors name it.
func TestImportNames(t *testing.T) {
	req := &carillonv1.ImportJobsRequest{
		Groups: []*carillonv1.Group{{Id: 7, AppName: "ok"}},
		Jobs:   []*carillonv1.Job{{Id: 12, Handler: strings.Repeat("h", 256)}},
	}
	r := rpcs["/carillon.v1.JobService/ImportJobs"]
	err := newShape().check(req, r.nameFor(req))
	if want := "jobs[0] (source id 12).handler: must be at most 255 bytes, got 256"; err == nil || err.(*connect.Error).Message() != want {
		t.Errorf("ImportJobs: %v, want %q", err, want)
	}
}

// TestReportResultsLimitIsTheRule: the hand-written check of ReportResults
// (its hot path skips the buf.validate rules) keeps the limit of the rule
// the .proto states.
func TestReportResultsLimitIsTheRule(t *testing.T) {
	fd := (&carillonv1.ReportResultsRequest{}).ProtoReflect().Descriptor().Fields().ByName("results")
	rules := proto.GetExtension(fd.Options(), validate.E_Field).(*validate.FieldRules)
	if got := rules.GetRepeated().GetMaxItems(); got != maxResults {
		t.Errorf("ReportResultsRequest.results: max_items %d in the .proto, %d checked by hand", got, maxResults)
	}
	r := rpcs["/carillon.v1.RegistryService/ReportResults"]
	if !r.handShape || r.validate(&carillonv1.ReportResultsRequest{Results: make([]*carillonv1.RunResult, maxResults+1)}) == nil {
		t.Error("ReportResults: want its row to check the results' count by hand")
	}
}

// TestPasswordRulesAreAuths: the password rules of the requests say the
// lengths auth.CheckPasswordRules checks (for the first ADMIN's password
// too, which comes by no request).
func TestPasswordRulesAreAuths(t *testing.T) {
	n := 0
	for _, m := range []proto.Message{&carillonv1.ChangePasswordRequest{}, &carillonv1.CreateUserRequest{}, &carillonv1.UpdateUserRequest{}} {
		fds := m.ProtoReflect().Descriptor().Fields()
		for i := range fds.Len() {
			fd := fds.Get(i)
			if !strings.HasSuffix(string(fd.Name()), "password") || fd.Name() == "old_password" {
				continue
			}
			n++
			s := proto.GetExtension(fd.Options(), validate.E_Field).(*validate.FieldRules).GetString()
			if s.GetMinBytes() != auth.PasswordMinLen || s.GetMaxBytes() != auth.PasswordMaxLen {
				t.Errorf("%s: %d to %d bytes, auth says %d to %d", fd.FullName(), s.GetMinBytes(), s.GetMaxBytes(), auth.PasswordMinLen, auth.PasswordMaxLen)
			}
		}
	}
	if n != 3 {
		t.Errorf("%d new password fields, want 3", n)
	}
}

// BenchmarkReportResultsShape checks a batch of 100 results as
// ReportResults's row does (by hand) and as the buf.validate rules would:
// the row keeps the cheaper.
func BenchmarkReportResultsShape(b *testing.B) {
	req := &carillonv1.ReportResultsRequest{InstanceId: "instance-a"}
	for i := range 100 {
		req.Results = append(req.Results, &carillonv1.RunResult{RunId: int64(i + 1),
			Status: carillonv1.RunStatus_RUN_STATUS_SUCCEEDED, Message: "done"})
	}
	r := rpcs["/carillon.v1.RegistryService/ReportResults"]
	b.Run("hand", func(b *testing.B) {
		for b.Loop() {
			if err := r.validate(req); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("rules", func(b *testing.B) {
		s := newShape()
		for b.Loop() {
			if err := s.check(req, nil); err != nil {
				b.Fatal(err)
			}
		}
	})
}
