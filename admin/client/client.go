package client

import (
	"github.com/carillonhq/carillon/proto/carillon/v1/carillonv1connect"

	"connectrpc.com/connect"
)

// Clients holds one client of each management service of an admin. All of
// them share the http.Client and the options they were made with.
type Clients struct {
	// Groups manages executor groups.
	Groups carillonv1connect.GroupServiceClient
	// Jobs manages jobs, triggers them and previews schedules.
	Jobs carillonv1connect.JobServiceClient
	// Runs lists, reads, kills and deletes runs and reads their logs.
	Runs carillonv1connect.RunServiceClient
	// Users manages users, sessions, API tokens and reads the audit log.
	Users carillonv1connect.UserServiceClient
	// Reports reads the dashboard.
	Reports carillonv1connect.ReportServiceClient
	// Workflows manages workflows (jobs in a DAG) and their runs.
	Workflows carillonv1connect.WorkflowServiceClient
	// Calendars manages calendars: instants jobs' schedules skip.
	Calendars carillonv1connect.CalendarServiceClient
	// Apply makes groups, jobs and calendars what definitions say, and
	// exports them (`carillon apply`, `carillon export`).
	Apply carillonv1connect.ApplyServiceClient
}

// New returns the clients of the admin at baseURL ("http://127.0.0.1:8080",
// no trailing path), calling it through httpClient (http.DefaultClient when
// nil). Pass WithToken to authenticate; every call but UserService.Login
// needs a credential.
func New(httpClient connect.HTTPClient, baseURL string, opts ...connect.ClientOption) *Clients {
	if httpClient == nil {
		httpClient = defaultHTTPClient
	}
	return &Clients{
		Groups:    carillonv1connect.NewGroupServiceClient(httpClient, baseURL, opts...),
		Jobs:      carillonv1connect.NewJobServiceClient(httpClient, baseURL, opts...),
		Runs:      carillonv1connect.NewRunServiceClient(httpClient, baseURL, opts...),
		Users:     carillonv1connect.NewUserServiceClient(httpClient, baseURL, opts...),
		Reports:   carillonv1connect.NewReportServiceClient(httpClient, baseURL, opts...),
		Workflows: carillonv1connect.NewWorkflowServiceClient(httpClient, baseURL, opts...),
		Calendars: carillonv1connect.NewCalendarServiceClient(httpClient, baseURL, opts...),
		Apply:     carillonv1connect.NewApplyServiceClient(httpClient, baseURL, opts...),
	}
}
