package main

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"connectrpc.com/connect"

	"github.com/carillonhq/carillon/admin/client"
	carillonv1 "github.com/carillonhq/carillon/proto/carillon/v1"
	"github.com/carillonhq/carillon/proto/carillon/v1/carillonv1connect"
)

// api holds the management clients of one admin. Calls carry
// "Authorization: Bearer <token>" once use has been given a token.
type api struct {
	baseURL string
	http    *http.Client
	token   string
	groups  carillonv1connect.GroupServiceClient
	jobs    carillonv1connect.JobServiceClient
	report  carillonv1connect.ReportServiceClient
	users   carillonv1connect.UserServiceClient
	// workflows is for --workflows.
	workflows carillonv1connect.WorkflowServiceClient
}

func newAPI(baseURL string) *api {
	a := &api{baseURL: baseURL, http: &http.Client{
		Transport: &http.Transport{MaxIdleConns: 64, MaxIdleConnsPerHost: 64, IdleConnTimeout: time.Minute},
		Timeout:   time.Minute,
	}}
	a.use("")
	return a
}

// use makes later calls carry token ("": none).
func (a *api) use(token string) {
	c := client.New(a.http, a.baseURL, client.WithToken(token))
	a.token, a.groups, a.jobs, a.report, a.users, a.workflows = token, c.Groups, c.Jobs, c.Reports, c.Users, c.Workflows
}

// login gets a session for user. An admin that predates users and roles
// (no UserService) needs no credential: login then returns false and no
// error.
func (a *api) login(ctx context.Context, user, password string) (bool, error) {
	res, err := a.users.Login(ctx, &carillonv1.LoginRequest{Username: user, Password: password})
	if connect.CodeOf(err) == connect.CodeUnimplemented {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("log in as %q: %w", user, err)
	}
	a.use(res.Token)
	return true, nil
}

// executorToken asks the admin for its executor token; "" when it has none
// to give (no UserService, or not an ADMIN).
func (a *api) executorToken(ctx context.Context) (string, error) {
	res, err := a.users.GetExecutorToken(ctx, &carillonv1.GetExecutorTokenRequest{})
	switch connect.CodeOf(err) {
	case connect.CodeUnimplemented, connect.CodePermissionDenied:
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("executor token: %w", err)
	}
	return res.Token, nil
}

// completed returns the runs the dashboard counts as succeeded and as
// failed over yesterday and today.
func (a *api) completed(ctx context.Context) (succeeded, failed int64, err error) {
	now := time.Now()
	res, err := a.report.GetDashboard(ctx, &carillonv1.GetDashboardRequest{From: ts(now.AddDate(0, 0, -1)), To: ts(now)})
	if err != nil {
		return 0, 0, fmt.Errorf("dashboard: %w", err)
	}
	for _, d := range res.Days {
		succeeded += d.Succeeded
		failed += d.Failed
	}
	return succeeded, failed, nil
}

// groupAddresses returns the live executors of group id.
func (a *api) groupAddresses(ctx context.Context, id int64) ([]string, error) {
	res, err := a.groups.GetGroup(ctx, &carillonv1.GetGroupRequest{Id: id})
	if err != nil {
		return nil, fmt.Errorf("group %d: %w", id, err)
	}
	return res.Group.Addresses, nil
}
