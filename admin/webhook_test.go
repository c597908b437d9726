package admin_test

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"

	"connectrpc.com/connect"

	"github.com/carillonhq/carillon/admin"
	"github.com/carillonhq/carillon/admin/client"
	carillonv1 "github.com/carillonhq/carillon/proto/carillon/v1"
	"github.com/carillonhq/carillon/proto/carillon/v1/carillonv1connect"
)

// startAllowListAdmin starts an admin that allows MEMBERs webhooks under
// https://hooks.example.com/carillon/ only, with a group "team-a".
func startAllowListAdmin(t *testing.T) (*testAdmin, clients, *carillonv1.CreateGroupResponse) {
	t.Helper()
	a := startAdminWith(t, admin.Config{AlarmWebhookAllow: "https://hooks.example.com/carillon/"}, http.DefaultClient)
	c := newClients(a.URL, http.DefaultClient)
	g, err := c.group.CreateGroup(context.Background(), &carillonv1.CreateGroupRequest{Group: &carillonv1.Group{AppName: "team-a"}})
	if err != nil {
		t.Fatal(err)
	}
	return a, c, g
}

// TestWebhookAllowList checks that a MEMBER sets a job's alarm webhook only
// to a URL under the admin's allow-list, that an ADMIN sets any, and that
// a MEMBER may still edit a job whose webhook an ADMIN set.
func TestWebhookAllowList(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	a, c, g := startAllowListAdmin(t)
	member := clientsAs(a.URL, newUser(t, a.URL, &carillonv1.User{Username: "member", Role: carillonv1.Role_ROLE_MEMBER, GroupIds: []int64{g.Group.Id}}))
	job := func(webhook string) *carillonv1.Job {
		return &carillonv1.Job{GroupId: g.Group.Id, Description: "d", Handler: "ok", AlarmWebhookUrl: webhook,
			Schedule: &carillonv1.Schedule{Type: carillonv1.ScheduleType_SCHEDULE_TYPE_NONE}}
	}
	for _, url := range []string{"http://127.0.0.1:9/internal", "https://hooks.example.com/other", "https://hooks.example.com.evil.example/carillon/"} {
		_, err := member.job.CreateJob(ctx, &carillonv1.CreateJobRequest{Job: job(url)})
		if connect.CodeOf(err) != connect.CodeInvalidArgument || !strings.Contains(err.Error(), "job.alarm_webhook_url") {
			t.Errorf("MEMBER CreateJob with webhook %s: %v, want invalid_argument naming job.alarm_webhook_url", url, err)
		}
	}
	if _, err := member.job.CreateJob(ctx, &carillonv1.CreateJobRequest{Job: job("https://hooks.example.com/carillon/team-a")}); err != nil {
		t.Errorf("MEMBER CreateJob with an allowed webhook: %v", err)
	}
	set, err := c.job.CreateJob(ctx, &carillonv1.CreateJobRequest{Job: job("http://127.0.0.1:9/internal")})
	if err != nil {
		t.Fatalf("ADMIN CreateJob with any webhook: %v", err)
	}
	edit := job("http://127.0.0.1:9/internal")
	edit.Id, edit.Description = set.Job.Id, "edited by a member"
	if _, err := member.job.UpdateJob(ctx, &carillonv1.UpdateJobRequest{Job: edit}); err != nil {
		t.Errorf("MEMBER UpdateJob keeping the ADMIN's webhook: %v", err)
	}
	edit.AlarmWebhookUrl = "http://127.0.0.1:9/other"
	if _, err := member.job.UpdateJob(ctx, &carillonv1.UpdateJobRequest{Job: edit}); connect.CodeOf(err) != connect.CodeInvalidArgument {
		t.Errorf("MEMBER UpdateJob to a webhook outside the list: %v, want invalid_argument", err)
	}
}

// TestWorkflowAlarmChecks: a workflow's alarm channels are checked as a
// job's: plain e-mail addresses, and a webhook a MEMBER may set only
// under the allow-list, an ADMIN anywhere; a MEMBER may edit a workflow
// keeping the webhook an ADMIN set.
func TestWorkflowAlarmChecks(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	a, c, g := startAllowListAdmin(t)
	j, err := c.job.CreateJob(ctx, &carillonv1.CreateJobRequest{Job: &carillonv1.Job{GroupId: g.Group.Id, Description: "d", Handler: "ok",
		Schedule: &carillonv1.Schedule{Type: carillonv1.ScheduleType_SCHEDULE_TYPE_NONE}}})
	if err != nil {
		t.Fatal(err)
	}
	tok := newUser(t, a.URL, &carillonv1.User{Username: "member", Role: carillonv1.Role_ROLE_MEMBER, GroupIds: []int64{g.Group.Id}})
	member := carillonv1connect.NewWorkflowServiceClient(http.DefaultClient, a.URL, client.WithToken(tok))
	wf := workflowClient(a.URL)
	n := 0
	workflow := func(webhook string, emails ...string) *carillonv1.Workflow {
		n++
		return &carillonv1.Workflow{GroupId: g.Group.Id, Name: fmt.Sprintf("w%d", n), AlarmWebhookUrl: webhook, AlarmEmails: emails,
			Nodes: []*carillonv1.WorkflowNode{{Key: "a", JobId: j.Job.Id}}}
	}
	for _, url := range []string{"http://127.0.0.1:9/internal", "https://hooks.example.com/other"} {
		_, err := member.CreateWorkflow(ctx, &carillonv1.CreateWorkflowRequest{Workflow: workflow(url)})
		if connect.CodeOf(err) != connect.CodeInvalidArgument || !strings.Contains(err.Error(), "workflow.alarm_webhook_url") {
			t.Errorf("MEMBER CreateWorkflow with webhook %s: %v, want invalid_argument naming workflow.alarm_webhook_url", url, err)
		}
	}
	_, err = wf.CreateWorkflow(ctx, &carillonv1.CreateWorkflowRequest{Workflow: workflow("", "ops@example.com", "Ops <ops@example.com>")})
	if connect.CodeOf(err) != connect.CodeInvalidArgument || !strings.Contains(err.Error(), "workflow.alarm_emails[1]") {
		t.Errorf("CreateWorkflow with a named address: %v, want invalid_argument naming workflow.alarm_emails[1]", err)
	}
	ok, err := member.CreateWorkflow(ctx, &carillonv1.CreateWorkflowRequest{Workflow: workflow("https://hooks.example.com/carillon/team-a", "ops@example.com")})
	if err != nil {
		t.Fatalf("MEMBER CreateWorkflow with an allowed webhook: %v", err)
	}
	if got := ok.Workflow; got.AlarmWebhookUrl != "https://hooks.example.com/carillon/team-a" || !slices.Equal(got.AlarmEmails, []string{"ops@example.com"}) {
		t.Errorf("stored workflow's alarms: %q %v", got.AlarmWebhookUrl, got.AlarmEmails)
	}
	set, err := wf.CreateWorkflow(ctx, &carillonv1.CreateWorkflowRequest{Workflow: workflow("http://127.0.0.1:9/internal")})
	if err != nil {
		t.Fatalf("ADMIN CreateWorkflow with any webhook: %v", err)
	}
	edit := set.Workflow
	edit.Description = "edited by a member"
	if _, err := member.UpdateWorkflow(ctx, &carillonv1.UpdateWorkflowRequest{Workflow: edit}); err != nil {
		t.Errorf("MEMBER UpdateWorkflow keeping the ADMIN's webhook: %v", err)
	}
	edit.AlarmWebhookUrl = "http://127.0.0.1:9/other"
	if _, err := member.UpdateWorkflow(ctx, &carillonv1.UpdateWorkflowRequest{Workflow: edit}); connect.CodeOf(err) != connect.CodeInvalidArgument {
		t.Errorf("MEMBER UpdateWorkflow to a webhook outside the list: %v, want invalid_argument", err)
	}
}
