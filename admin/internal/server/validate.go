package server

import (
	"context"
	"fmt"
	"regexp"
	"unicode"
	"unicode/utf8"

	"connectrpc.com/connect"

	"github.com/carillonhq/carillon/admin/internal/auth"
	carillonv1 "github.com/carillonhq/carillon/proto/carillon/v1"
)

// Limits on request fields, checked by validate before any handler runs.
// Handlers check the rest (required fields, enum values, cron, time zones,
// URLs, that groups and child jobs exist).
const (
	// MaxRequestBytes bounds one management request message.
	MaxRequestBytes = 1 << 20
	// MaxRegistryRequestBytes bounds one RegistryService request (a batch of
	// results with messages).
	MaxRegistryRequestBytes = 4 << 20

	maxShortText  = 255       // description, owner, handler, title, filters
	maxParam      = 64 << 10  // job param, trigger param
	maxScript     = 512 << 10 // script source
	maxURLLen     = 2048      // executor addresses, webhook URL
	maxAddresses  = 100       // MANUAL group addresses, trigger addresses
	maxEmails     = 20        // alarm e-mails
	maxChildren   = 64        // child jobs
	maxCron       = 255       // cron expression
	maxTimeZone   = 64        // IANA zone name
	maxTimeout    = 30 * 86400
	maxInterval   = 366 * 86400
	maxGrants     = 1000
	maxResults    = 10_000 // results in one ReportResults batch
	maxTokenTTL   = 10 * 366 * 86400
	maxTokenName  = 64
	maxUsername   = 64
	maxAuditQuery = 128
)

// usernamePattern: 3 to 64 letters, digits, '.', '_', '@' or '-', starting
// with a letter or digit.
var usernamePattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._@-]{2,63}$`)

// validate checks the shape of a request: ids, lengths, counts and ranges,
// so that bad input is invalid_argument naming the field and the rule, and
// changes nothing.
func validate(req any) error {
	switch r := req.(type) {
	case *carillonv1.CreateGroupRequest:
		return checkGroupLimits(r.Group)
	case *carillonv1.GetGroupRequest:
		return positiveID("id", r.Id)
	case *carillonv1.UpdateGroupRequest:
		if r.Group == nil {
			return invalid("group", "required")
		}
		if err := positiveID("group.id", r.Group.Id); err != nil {
			return err
		}
		return checkGroupLimits(r.Group)
	case *carillonv1.DeleteGroupRequest:
		return positiveID("id", r.Id)
	case *carillonv1.UnlockUserRequest:
		return positiveID("id", r.Id)
	case *carillonv1.RotateGroupTokenRequest:
		return positiveID("id", r.Id)
	case *carillonv1.ClearGroupTokenRequest:
		return positiveID("id", r.Id)

	case *carillonv1.CreateJobRequest:
		return checkJobLimits(r.Job)
	case *carillonv1.GetJobRequest:
		return positiveID("id", r.Id)
	case *carillonv1.ListJobsRequest:
		if r.GroupId < 0 {
			return invalid("group_id", "must be 0 (every group) or a group id, got %d", r.GroupId)
		}
		if err := maxLen("handler", r.Handler, maxShortText); err != nil {
			return err
		}
		return maxLen("text", r.Text, maxShortText)
	case *carillonv1.UpdateJobRequest:
		if r.Job == nil {
			return invalid("job", "required")
		}
		if err := positiveID("job.id", r.Job.Id); err != nil {
			return err
		}
		return checkJobLimits(r.Job)
	case *carillonv1.DeleteJobRequest:
		return positiveID("id", r.Id)
	case *carillonv1.StartJobRequest:
		return positiveID("id", r.Id)
	case *carillonv1.StopJobRequest:
		return positiveID("id", r.Id)
	case *carillonv1.TriggerJobRequest:
		if err := positiveID("job_id", r.JobId); err != nil {
			return err
		}
		if err := maxLen("param", r.GetParam(), maxParam); err != nil {
			return err
		}
		if err := checkText("param", r.GetParam(), true); err != nil {
			return err
		}
		return checkAddresses("addresses", r.Addresses)
	case *carillonv1.PreviewScheduleRequest:
		return checkScheduleLimits("schedule", r.Schedule)

	case *carillonv1.ListRunsRequest:
		if r.JobId < 0 {
			return invalid("job_id", "must be 0 (every job) or a job id, got %d", r.JobId)
		}
		if r.GroupId < 0 {
			return invalid("group_id", "must be 0 (every group) or a group id, got %d", r.GroupId)
		}
	case *carillonv1.GetRunRequest:
		return positiveID("id", r.Id)
	case *carillonv1.ReadRunLogRequest:
		return positiveID("run_id", r.RunId)
	case *carillonv1.KillRunRequest:
		return positiveID("run_id", r.RunId)
	case *carillonv1.DeleteRunsRequest:
		if r.JobId < 0 {
			return invalid("job_id", "must be 0 (every job) or a job id, got %d", r.JobId)
		}
		if r.GroupId < 0 {
			return invalid("group_id", "must be 0 (every group) or a group id, got %d", r.GroupId)
		}

	case *carillonv1.GetDashboardRequest:
		if r.From != nil && r.To != nil && r.From.AsTime().After(r.To.AsTime()) {
			return invalid("from", "must not be after to")
		}

	case *carillonv1.RegisterRequest:
		return maxLen("address", r.Address, maxURLLen)
	case *carillonv1.DeregisterRequest:
		return maxLen("address", r.Address, maxURLLen)
	case *carillonv1.ReportResultsRequest:
		if len(r.Results) > maxResults {
			return invalid("results", "at most %d per batch, got %d", maxResults, len(r.Results))
		}

	case *carillonv1.LoginRequest:
		if r.Username == "" {
			return invalid("username", "required")
		}
		if err := maxLen("username", r.Username, maxUsername); err != nil {
			return err
		}
		if r.Password == "" {
			return invalid("password", "required")
		}
		return maxLen("password", r.Password, 1024)
	case *carillonv1.ChangePasswordRequest:
		if r.OldPassword == "" {
			return invalid("old_password", "required")
		}
		return checkPassword("new_password", r.NewPassword)
	case *carillonv1.CreateUserRequest:
		if r.User == nil {
			return invalid("user", "required")
		}
		if !usernamePattern.MatchString(r.User.Username) {
			return invalid("user.username", "must be 3 to 64 letters, digits, '.', '_', '@' or '-', starting with a letter or digit, got %q", r.User.Username)
		}
		if err := checkUserLimits(r.User); err != nil {
			return err
		}
		return checkPassword("password", r.Password)
	case *carillonv1.GetUserRequest:
		return positiveID("id", r.Id)
	case *carillonv1.UpdateUserRequest:
		if r.User == nil {
			return invalid("user", "required")
		}
		if err := positiveID("user.id", r.User.Id); err != nil {
			return err
		}
		if err := checkUserLimits(r.User); err != nil {
			return err
		}
		if r.Password != "" {
			return checkPassword("password", r.Password)
		}
	case *carillonv1.DeleteUserRequest:
		return positiveID("id", r.Id)
	case *carillonv1.CreateApiTokenRequest:
		if r.Name == "" {
			return invalid("name", "required: say what the token is for, e.g. \"ci\"")
		}
		if err := maxLen("name", r.Name, maxTokenName); err != nil {
			return err
		}
		if r.ExpiresInSeconds < 0 || r.ExpiresInSeconds > maxTokenTTL {
			return invalid("expires_in_seconds", "must be between 0 (never) and %d (10 years), got %d", maxTokenTTL, r.ExpiresInSeconds)
		}
	case *carillonv1.ListApiTokensRequest:
		if r.UserId < 0 {
			return invalid("user_id", "must be 0 (yours) or a user id, got %d", r.UserId)
		}
	case *carillonv1.RevokeApiTokenRequest:
		return positiveID("id", r.Id)
	case *carillonv1.ListAuditLogRequest:
		if err := maxLen("username", r.Username, maxAuditQuery); err != nil {
			return err
		}
		if err := maxLen("action", r.Action, maxAuditQuery); err != nil {
			return err
		}
		if r.From != nil && r.To != nil && !r.From.AsTime().Before(r.To.AsTime()) {
			return invalid("to", "must be after from")
		}
	}
	return nil
}

func positiveID(field string, id int64) error {
	if id <= 0 {
		return invalid(field, "required: a positive id, got %d", id)
	}
	return nil
}

// maxLen requires s to be valid UTF-8 of at most n bytes.
func maxLen(field, s string, n int) error {
	if len(s) > n {
		return invalid(field, "must be at most %d bytes, got %d", n, len(s))
	}
	if !utf8.ValidString(s) {
		return invalid(field, "must be valid UTF-8")
	}
	return nil
}

// checkText refuses control characters (NUL included) in s: a name, a
// handler or a title with one cannot be matched or shown. Multi-line text
// (a description, a param, a script) may hold line breaks and tabs.
func checkText(field, s string, multiLine bool) error {
	for i, r := range s {
		if !unicode.IsControl(r) || (multiLine && (r == '\n' || r == '\r' || r == '\t')) {
			continue
		}
		what := "control characters"
		if multiLine {
			what = "control characters other than line breaks and tabs"
		}
		return invalid(field, "must not contain %s, got %U at byte %d", what, r, i)
	}
	return nil
}

func checkAddresses(field string, addrs []string) error {
	if len(addrs) > maxAddresses {
		return invalid(field, "at most %d addresses, got %d", maxAddresses, len(addrs))
	}
	for i, a := range addrs {
		if err := maxLen(fmt.Sprintf("%s[%d]", field, i), a, maxURLLen); err != nil {
			return err
		}
		if err := checkText(fmt.Sprintf("%s[%d]", field, i), a, false); err != nil {
			return err
		}
	}
	return nil
}

func checkGroupLimits(g *carillonv1.Group) error {
	if g == nil {
		return nil // the handler says it is required
	}
	if err := maxLen("group.app_name", g.AppName, maxShortText); err != nil {
		return err
	}
	if err := maxLen("group.title", g.Title, maxShortText); err != nil {
		return err
	}
	if err := checkText("group.title", g.Title, false); err != nil {
		return err
	}
	return checkAddresses("group.addresses", g.Addresses)
}

func checkScheduleLimits(field string, s *carillonv1.Schedule) error {
	if s == nil {
		return nil // the handler says it is required
	}
	if err := maxLen(field+".cron", s.Cron, maxCron); err != nil {
		return err
	}
	if err := maxLen(field+".time_zone", s.TimeZone, maxTimeZone); err != nil {
		return err
	}
	if s.IntervalSeconds < 0 || s.IntervalSeconds > maxInterval {
		return invalid(field+".interval_seconds", "must be between 1 and %d (366 days), got %d", maxInterval, s.IntervalSeconds)
	}
	return nil
}

// checkJobLimits bounds a job's sizes; checkJob (in the handler) does the
// rest once defaults and the update mask are applied.
func checkJobLimits(j *carillonv1.Job) error {
	if j == nil {
		return nil // the handler says it is required
	}
	for _, f := range []struct {
		field, value string
		max          int
		multiLine    bool
	}{
		{"job.description", j.Description, maxShortText, true},
		{"job.owner", j.Owner, maxShortText, false},
		{"job.handler", j.Handler, maxShortText, false},
		{"job.param", j.Param, maxParam, true},
		{"job.script.source", j.GetScript().GetSource(), maxScript, true},
		{"job.alarm_webhook_url", j.AlarmWebhookUrl, maxURLLen, false},
	} {
		if err := maxLen(f.field, f.value, f.max); err != nil {
			return err
		}
		if err := checkText(f.field, f.value, f.multiLine); err != nil {
			return err
		}
	}
	if len(j.AlarmEmails) > maxEmails {
		return invalid("job.alarm_emails", "at most %d addresses, got %d", maxEmails, len(j.AlarmEmails))
	}
	for i, e := range j.AlarmEmails {
		if err := maxLen(fmt.Sprintf("job.alarm_emails[%d]", i), e, maxShortText); err != nil {
			return err
		}
		if err := checkText(fmt.Sprintf("job.alarm_emails[%d]", i), e, false); err != nil {
			return err
		}
	}
	if len(j.ChildJobIds) > maxChildren {
		return invalid("job.child_job_ids", "at most %d child jobs, got %d", maxChildren, len(j.ChildJobIds))
	}
	if j.TimeoutSeconds > maxTimeout {
		return invalid("job.timeout_seconds", "must be at most %d (30 days), got %d", maxTimeout, j.TimeoutSeconds)
	}
	return checkScheduleLimits("job.schedule", j.Schedule)
}

func checkUserLimits(u *carillonv1.User) error {
	if len(u.GroupIds) > maxGrants {
		return invalid("user.group_ids", "at most %d groups, got %d", maxGrants, len(u.GroupIds))
	}
	for i, id := range u.GroupIds {
		if id <= 0 {
			return invalid(fmt.Sprintf("user.group_ids[%d]", i), "must be a group id, got %d", id)
		}
	}
	return nil
}

func checkPassword(field, pw string) error {
	if pw == "" {
		return invalid(field, "required")
	}
	if err := auth.CheckPasswordRules(pw); err != nil {
		return invalid(field, "must be %d to %d bytes, got %d", auth.PasswordMinLen, auth.PasswordMaxLen, len(pw))
	}
	return nil
}

// validateInterceptor runs validate for services without the auth
// interceptor (RegistryService).
func validateInterceptor() connect.UnaryInterceptorFunc {
	return func(next connect.UnaryFunc) connect.UnaryFunc {
		return func(ctx context.Context, req connect.AnyRequest) (connect.AnyResponse, error) {
			if err := validate(req.Any()); err != nil {
				return nil, err
			}
			return next(ctx, req)
		}
	}
}
