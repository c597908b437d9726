package admin_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"connectrpc.com/connect"

	"github.com/carillonhq/carillon/admin"
	carillonv1 "github.com/carillonhq/carillon/proto/carillon/v1"
)

// TestWebhookAllowList checks that a MEMBER sets a job's alarm webhook only
// to a URL under the admin's allow-list, that an ADMIN sets any, and that
// a MEMBER may still edit a job whose webhook an ADMIN set.
func TestWebhookAllowList(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	a := startAdminWith(t, admin.Config{AlarmWebhookAllow: "https://hooks.example.com/carillon/"}, http.DefaultClient)
	c := newClients(a.URL, http.DefaultClient)
	g, err := c.group.CreateGroup(ctx, &carillonv1.CreateGroupRequest{Group: &carillonv1.Group{AppName: "team-a"}})
	if err != nil {
		t.Fatal(err)
	}
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
