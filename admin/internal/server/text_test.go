package server_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"connectrpc.com/connect"

	"github.com/carillonhq/carillon/admin/internal/dbtest"
	carillonv1 "github.com/carillonhq/carillon/proto/carillon/v1"
)

// TestMultiLineTextAllowed: control characters are refused in names and
// titles (TestValidation), but a description and a param may span lines.
func TestMultiLineTextAllowed(t *testing.T) {
	t.Parallel()
	dbtest.Backends(t, func(t *testing.T, be dbtest.Backend) {
		f := newFixture(t, be)
		j, err := f.as["admin"].job.CreateJob(context.Background(), &carillonv1.CreateJobRequest{Job: &carillonv1.Job{
			GroupId: f.groupA, Description: "first line\nsecond line", Handler: "h", Param: "key=1\n\tkey=2\r\n",
			Schedule: &carillonv1.Schedule{Type: carillonv1.ScheduleType_SCHEDULE_TYPE_NONE},
		}})
		if err != nil {
			t.Fatalf("multi-line description and param: %v, want accepted", err)
		}
		if j.Job.Description != "first line\nsecond line" || j.Job.Param != "key=1\n\tkey=2\r\n" {
			t.Errorf("stored %q and %q", j.Job.Description, j.Job.Param)
		}
	})
}

// TestNeverFiringScheduleRefused: a job whose cron never fires after now
// cannot be created, enabled or not, nor updated onto such a cron, and a
// refused update changes nothing.
func TestNeverFiringScheduleRefused(t *testing.T) {
	t.Parallel()
	dbtest.Backends(t, func(t *testing.T, be dbtest.Backend) {
		ctx := context.Background()
		f := newFixture(t, be)
		c := f.as["admin"].job
		for _, cron := range []string{"0 0 0 30 2 ?", "* * * * * ? 1970", "0 0 0 29 2 ? 2097"} {
			for _, enabled := range []bool{true, false} {
				job := &carillonv1.Job{GroupId: f.groupA, Description: "never", Handler: "h", Enabled: enabled,
					Schedule: &carillonv1.Schedule{Type: carillonv1.ScheduleType_SCHEDULE_TYPE_CRON, Cron: cron, TimeZone: "UTC"}}
				_, err := c.CreateJob(ctx, &carillonv1.CreateJobRequest{Job: job})
				if connect.CodeOf(err) != connect.CodeInvalidArgument || !strings.Contains(err.Error(), "never fires") ||
					!strings.Contains(err.Error(), "cron") {
					t.Errorf("create %q enabled=%v: %v, want invalid_argument saying it never fires", cron, enabled, err)
				}
			}
			job := &carillonv1.Job{GroupId: f.groupA, Description: "fires", Handler: "h",
				Schedule: &carillonv1.Schedule{Type: carillonv1.ScheduleType_SCHEDULE_TYPE_CRON, Cron: "0 0 0 1 1 ?", TimeZone: "UTC"}}
			stopped, err := c.CreateJob(ctx, &carillonv1.CreateJobRequest{Job: job})
			if err != nil {
				t.Fatal(err)
			}
			stopped.Job.Schedule.Cron = cron
			_, err = c.UpdateJob(ctx, &carillonv1.UpdateJobRequest{Job: stopped.Job})
			if connect.CodeOf(err) != connect.CodeInvalidArgument || !strings.Contains(err.Error(), "never fires") {
				t.Errorf("update a stopped job to %q: %v, want invalid_argument saying it never fires", cron, err)
			}
			got, err := c.GetJob(ctx, &carillonv1.GetJobRequest{Id: stopped.Job.Id})
			if err != nil || got.Job.Schedule.Cron != "0 0 0 1 1 ?" {
				t.Errorf("after the refused update: %v, %v", got, err)
			}
		}
	})
}

// TestBidiControlsRefused: every Unicode bidi embedding, override and
// isolate control is refused in names, titles and descriptions, naming the
// field as the JSON request did and the rule, and the database is left as
// it was; a param keeps them, and marks that only set direction (U+200E,
// U+200F) are taken everywhere.
func TestBidiControlsRefused(t *testing.T) {
	t.Parallel()
	dbtest.Backends(t, func(t *testing.T, be dbtest.Backend) {
		f := newFixture(t, be)
		var controls []rune
		for r := rune(0x202A); r <= 0x202E; r++ {
			controls = append(controls, r)
		}
		for r := rune(0x2066); r <= 0x2069; r++ {
			controls = append(controls, r)
		}
		// Each body has one X, replaced by the character tried.
		cases := []struct {
			proc, body, field string
		}{
			{"GroupService/CreateGroup", `{"group":{"appName":"bidi","title":"aXb"}}`, "group.title"},
			{"GroupService/UpdateGroup", `{"group":{"id":"1","title":"X"},"updateMask":"title"}`, "group.title"},
			{"GroupService/CreateGroup", `{"group":{"appName":"bidi","addressMode":"ADDRESS_MODE_MANUAL","addresses":["http://10.0.0.1:99/X"]}}`, "group.addresses[0]"},
			{"JobService/CreateJob", `{"job":{"groupId":"1","description":"pay Xinvoices","handler":"h","schedule":{"type":"SCHEDULE_TYPE_NONE"}}}`, "job.description"},
			{"JobService/CreateJob", `{"job":{"groupId":"1","description":"line one\nXline two","handler":"h","schedule":{"type":"SCHEDULE_TYPE_NONE"}}}`, "job.description"},
			{"JobService/CreateJob", `{"job":{"groupId":"1","description":"d","handler":"hX","schedule":{"type":"SCHEDULE_TYPE_NONE"}}}`, "job.handler"},
			{"JobService/CreateJob", `{"job":{"groupId":"1","description":"d","owner":"Xada","handler":"h","schedule":{"type":"SCHEDULE_TYPE_NONE"}}}`, "job.owner"},
			{"JobService/UpdateJob", `{"job":{"id":"1","description":"X"},"updateMask":"description"}`, "job.description"},
			{"JobService/ImportJobs", `{"groups":[{"id":"1","appName":"imp","title":"X"}]}`, "groups[0] (source id 1).title"},
			{"JobService/ImportJobs", `{"groups":[{"id":"1","appName":"imp"}],"jobs":[{"id":"5","groupId":"1","description":"dX","handler":"h","schedule":{"type":"SCHEDULE_TYPE_NONE"}}]}`, "jobs[0] (source id 5).description"},
			{"UserService/CreateApiToken", `{"name":"ciX"}`, "name"},
		}
		before := digest(t, f.db)
		for _, tt := range cases {
			for _, r := range controls {
				body := strings.Replace(tt.body, "X", string(r), 1)
				status, answer := postJSON(t, f.url, "/carillon.v1."+tt.proc, body, "Bearer "+f.admin)
				code, msg := connectError(answer)
				if status != http.StatusBadRequest || code != "invalid_argument" || !strings.HasPrefix(msg, tt.field+": ") ||
					!strings.Contains(msg, "bidi controls") || !strings.Contains(msg, fmt.Sprintf("%U", r)) {
					t.Errorf("%s with %U: %d %s %q, want invalid_argument naming %s, the rule and the character", tt.proc, r, status, code, msg, tt.field)
				}
			}
		}
		if digest(t, f.db) != before {
			t.Error("refused requests changed the database")
		}
		// Direction marks are not controls of the kind; a param is the handler's.
		j, err := f.as["admin"].job.CreateJob(context.Background(), &carillonv1.CreateJobRequest{Job: &carillonv1.Job{
			GroupId: f.groupA, Description: "\u200fעברית\u200e d", Handler: "h", Param: "x=\u202e1",
			Schedule: &carillonv1.Schedule{Type: carillonv1.ScheduleType_SCHEDULE_TYPE_NONE},
		}})
		if err != nil {
			t.Fatalf("direction marks in a description, an override in a param: %v, want accepted", err)
		}
		if j.Job.Param != "x=\u202e1" {
			t.Errorf("param stored as %q", j.Job.Param)
		}
	})
}
