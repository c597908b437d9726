package server

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/carillonhq/carillon/admin/internal/auth"
	"github.com/carillonhq/carillon/admin/internal/schedule"
	"github.com/carillonhq/carillon/admin/internal/store"
	"github.com/carillonhq/carillon/admin/internal/trigger"
	carillonv1 "github.com/carillonhq/carillon/proto/carillon/v1"
)

// jobService implements carillonv1connect.JobServiceHandler.
type jobService struct{ *Server }

// jobOutputFields cannot be set by CreateJob or UpdateJob; enabled changes
// through StartJob and StopJob (CreateJob takes it as the initial state).
var jobOutputFields = []string{"id", "enabled", "last_fire_at", "next_fire_at", "created_at", "updated_at", "last_run_id", "last_run_status",
	"has_alarm_webhook_secret"}

// checkJob validates a job from a request and fills its defaults. It does
// not check that the group and child jobs exist; the store does.
func checkJob(j *carillonv1.Job) error {
	if j == nil {
		return invalid("job", "required")
	}
	if j.GroupId <= 0 {
		return invalid("job.group_id", "required: the id of the executor group that runs the job")
	}
	if j.Description == "" {
		return invalid("job.description", "required")
	}
	if j.Schedule == nil {
		return invalid("job.schedule", "required")
	}
	if err := schedule.Check(specOf(j.Schedule)); err != nil {
		return invalidSchedule("job.schedule", err)
	}
	if j.Script == nil && j.Handler == "" {
		return invalid("job.handler", "required: the name a handler is registered under in the executor (or set job.script)")
	}
	if j.Script != nil {
		if j.Script.Type == carillonv1.ScriptType_SCRIPT_TYPE_UNSPECIFIED {
			return invalid("job.script.type", "must be one of SCRIPT_TYPE_SHELL, _PYTHON, _NODEJS, _PHP, _POWERSHELL, _GROOVY, got %d", j.Script.Type)
		}
		if j.Script.Source == "" {
			return invalid("job.script.source", "required for a script job")
		}
	}
	if err := checkAlarms("job", j.AlarmEmails, j.AlarmWebhookUrl); err != nil {
		return err
	}
	if err := checkWebhookFormat(j); err != nil {
		return err
	}
	if err := checkParamTemplate("job.param", j.Param, j.Schedule.TimeZone, j.ParamTemplate); err != nil {
		return err
	}
	seen := map[int64]bool{}
	for i, id := range j.ChildJobIds {
		if id == j.Id {
			return invalid(fmt.Sprintf("job.child_job_ids[%d]", i), "must be the id of another job, got %d", id)
		}
		if seen[id] {
			return invalid(fmt.Sprintf("job.child_job_ids[%d]", i), "job %d is listed twice", id)
		}
		seen[id] = true
	}
	// Defaults, stored explicitly so reads say what happens.
	if j.MisfireStrategy == carillonv1.MisfireStrategy_MISFIRE_STRATEGY_UNSPECIFIED {
		j.MisfireStrategy = carillonv1.MisfireStrategy_MISFIRE_STRATEGY_DO_NOTHING
	}
	if j.RouteStrategy == carillonv1.RouteStrategy_ROUTE_STRATEGY_UNSPECIFIED {
		j.RouteStrategy = carillonv1.RouteStrategy_ROUTE_STRATEGY_FIRST
	}
	if j.BlockStrategy == carillonv1.BlockStrategy_BLOCK_STRATEGY_UNSPECIFIED {
		j.BlockStrategy = carillonv1.BlockStrategy_BLOCK_STRATEGY_SERIAL
	}
	return nil
}

// invalidSchedule turns an error of schedule.Check into invalid_argument
// naming the field under prefix.
func invalidSchedule(prefix string, err error) error {
	var se *schedule.SpecError
	if errors.As(err, &se) {
		return invalid(prefix+"."+se.Field, "%v", se.Err)
	}
	return invalid(prefix, "%v", err)
}

func specOf(s *carillonv1.Schedule) schedule.Spec {
	return schedule.Spec{Type: s.GetType(), Cron: s.GetCron(), IntervalSeconds: s.GetIntervalSeconds(), TimeZone: s.GetTimeZone()}
}

// checkChildren requires each child job to exist and refuses children that
// would lead back to j (a cycle would fire forever).
func (s jobService) checkChildren(ctx context.Context, j *carillonv1.Job) error {
	for i, id := range j.ChildJobIds {
		field := fmt.Sprintf("job.child_job_ids[%d]", i)
		if _, err := s.cfg.Store.Jobs.Get(ctx, id); errors.Is(err, store.ErrNotFound) {
			return invalid(field, "job %d does not exist", id)
		} else if err != nil {
			return s.toConnect(err)
		}
		if j.Id == 0 {
			continue // a new job has no parents yet, so no cycle can reach it
		}
		path, err := s.pathTo(ctx, id, j.Id, map[int64]bool{})
		if err != nil {
			return s.toConnect(err)
		}
		if path != nil {
			return invalid(field, "job %d would form a cycle: %s", id, formatPath(append([]int64{j.Id}, path...)))
		}
	}
	return nil
}

// pathTo returns a chain of child links from job from to job to (both
// included), or nil if there is none.
func (s jobService) pathTo(ctx context.Context, from, to int64, seen map[int64]bool) ([]int64, error) {
	if from == to {
		return []int64{to}, nil
	}
	if seen[from] {
		return nil, nil
	}
	seen[from] = true
	j, err := s.cfg.Store.Jobs.Get(ctx, from)
	if errors.Is(err, store.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	for _, c := range j.ChildJobIDs {
		p, err := s.pathTo(ctx, c, to, seen)
		if err != nil || p != nil {
			return append([]int64{from}, p...), err
		}
	}
	return nil, nil
}

// checkJobGroup checks what a job's group allows of it: a Groovy script
// only in an XXL_JOB group. A missing group is left to the store.
func (s jobService) checkJobGroup(ctx context.Context, j *carillonv1.Job) error {
	if j.GetScript().GetType() != carillonv1.ScriptType_SCRIPT_TYPE_GROOVY {
		return nil
	}
	g, err := s.cfg.Store.Groups.Get(ctx, j.GroupId)
	if errors.Is(err, store.ErrNotFound) {
		return invalid("job.group_id", "group %d does not exist", j.GroupId)
	}
	if err != nil {
		return s.toConnect(err)
	}
	return checkScriptGroup(j, groupToProto(g, nil))
}

func formatPath(ids []int64) string {
	parts := make([]string, len(ids))
	for i, id := range ids {
		parts[i] = strconv.FormatInt(id, 10)
	}
	return strings.Join(parts, " -> ")
}

func (s jobService) CreateJob(ctx context.Context, req *carillonv1.CreateJobRequest) (*carillonv1.CreateJobResponse, error) {
	if err := checkJob(req.Job); err != nil {
		return nil, err
	}
	if err := s.checkChildren(ctx, req.Job); err != nil {
		return nil, err
	}
	if err := s.checkJobGroup(ctx, req.Job); err != nil {
		return nil, err
	}
	if err := s.checkWebhook(ctx, "job.alarm_webhook_url", req.Job.AlarmWebhookUrl, ""); err != nil {
		return nil, err
	}
	now := s.cfg.NowFunc()
	j := jobFromProto(req.Job)
	j.ID = 0
	spec, err := s.jobSpec(ctx, j)
	if err != nil {
		return nil, err
	}
	// A cron that never fires is refused, enabled or not: a job stored
	// on it could never run.
	next, err := s.firstFire(spec, now)
	if err != nil {
		return nil, err
	}
	if req.Job.Enabled {
		j.Enabled, j.NextFireAt = true, next
	}
	j, err = s.cfg.Store.Jobs.Create(ctx, j, now)
	if err != nil {
		return nil, s.toConnect(err)
	}
	s.cfg.WakeFunc()
	return &carillonv1.CreateJobResponse{Job: jobToProto(j)}, nil
}

func (s jobService) GetJob(ctx context.Context, req *carillonv1.GetJobRequest) (*carillonv1.GetJobResponse, error) {
	j, err := s.cfg.Store.Jobs.Get(ctx, req.Id)
	if err != nil {
		return nil, s.toConnect(err)
	}
	return &carillonv1.GetJobResponse{Job: jobToProto(j)}, nil
}

// pageSize is a request's page size (at most 500, its buf.validate
// rule); 0 means 100.
func pageSize(n int32) (int, error) {
	if n == 0 {
		return 100, nil
	}
	return int(n), nil
}

// page converts the items of a page fetched with one item more than size,
// and returns the token of the next page ("" when this is the last): the ID
// of its last item.
func page[T, P any](items []T, size int, conv func(T) P, id func(T) int64) ([]P, string) {
	token := ""
	if len(items) > size {
		items = items[:size]
		token = strconv.FormatInt(id(items[size-1]), 10)
	}
	out := make([]P, len(items))
	for i, it := range items {
		out[i] = conv(it)
	}
	return out, token
}

// paging checks a List request's page size and token (pageSize,
// pageToken).
func paging(size int32, token string) (int, int64, error) {
	n, err := pageSize(size)
	if err != nil {
		return 0, 0, err
	}
	id, err := pageToken(token)
	return n, id, err
}

// pageToken decodes a page token: the last id of the previous page.
func pageToken(tok string) (int64, error) {
	if tok == "" {
		return 0, nil
	}
	id, err := strconv.ParseInt(tok, 10, 64)
	if err != nil || id <= 0 {
		return 0, invalid("page_token", "not a token this server returned: %q", tok)
	}
	return id, nil
}

func (s jobService) ListJobs(ctx context.Context, req *carillonv1.ListJobsRequest) (*carillonv1.ListJobsResponse, error) {
	size, err := pageSize(req.PageSize)
	if err != nil {
		return nil, err
	}
	after, err := pageToken(req.PageToken)
	if err != nil {
		return nil, err
	}
	js, err := s.cfg.Store.Jobs.List(ctx, store.JobFilter{
		GroupID: req.GroupId, Enabled: req.Enabled, Handler: req.Handler, Text: req.Text, AfterID: after, Limit: size + 1,
	})
	if err != nil {
		return nil, s.toConnect(err)
	}
	res := &carillonv1.ListJobsResponse{}
	res.Jobs, res.NextPageToken = page(js, size, jobToProto, func(j store.Job) int64 { return j.ID })
	ids := make([]int64, len(res.Jobs))
	for i, j := range res.Jobs {
		ids[i] = j.Id
	}
	last, err := s.cfg.Store.Runs.Last(ctx, ids, req.GroupId)
	if err != nil {
		return nil, s.toConnect(err)
	}
	for _, j := range res.Jobs {
		if r, ok := last[j.Id]; ok {
			j.LastRunId, j.LastRunStatus = r.ID, r.Status
		}
	}
	return res, nil
}

func (s jobService) UpdateJob(ctx context.Context, req *carillonv1.UpdateJobRequest) (*carillonv1.UpdateJobResponse, error) {
	if req.Job == nil {
		return nil, invalid("job", "required")
	}
	old, err := s.cfg.Store.Jobs.Get(ctx, req.Job.Id)
	if err != nil {
		return nil, s.toConnect(err)
	}
	merged := jobToProto(old)
	if err := applyMask(merged, req.Job, req.UpdateMask, "job", jobOutputFields); err != nil {
		return nil, err
	}
	keepWebhookSecret(merged, req.UpdateMask, old.AlarmWebhookSecret)
	if err := checkJob(merged); err != nil {
		return nil, err
	}
	if err := s.checkChildren(ctx, merged); err != nil {
		return nil, err
	}
	if err := s.checkJobGroup(ctx, merged); err != nil {
		return nil, err
	}
	if err := s.checkWebhook(ctx, "job.alarm_webhook_url", merged.AlarmWebhookUrl, old.AlarmWebhookURL); err != nil {
		return nil, err
	}
	now := s.cfg.NowFunc()
	j := jobFromProto(merged)
	changed := schedule.SpecOf(j) != schedule.SpecOf(old) || !slices.Equal(j.CalendarIDs, old.CalendarIDs)
	if changed { // a new cron that never fires is refused, the job enabled or not
		spec, err := s.jobSpec(ctx, j)
		if err != nil {
			return nil, err
		}
		next, err := s.firstFire(spec, now)
		if err != nil {
			return nil, err
		}
		if old.Enabled {
			j.NextFireAt = next
		}
	}
	if j, err = s.cfg.Store.Jobs.Update(ctx, j, changed, now); err != nil {
		return nil, s.toConnect(err)
	}
	s.cfg.WakeFunc()
	return &carillonv1.UpdateJobResponse{Job: jobToProto(j)}, nil
}

// firstFire returns the first fire of a job's schedule after now, or
// invalid_argument when its cron never fires after now (a date that does
// not exist, a year gone by): a job on it could never run, so it is
// refused when created, when its schedule changes and when started.
// xxl-job refuses it too.
func (s jobService) firstFire(spec schedule.Spec, now time.Time) (time.Time, error) {
	return s.firstInstant(spec, now, "job")
}

// firstInstant is firstFire for the schedule of the request's object
// named what ("job", "workflow").
func (s *Server) firstInstant(spec schedule.Spec, now time.Time, what string) (time.Time, error) {
	next, err := schedule.First(spec, now)
	if err != nil {
		return time.Time{}, s.toConnect(err)
	}
	if !next.IsZero() || spec.Type == carillonv1.ScheduleType_SCHEDULE_TYPE_NONE {
		return next, nil
	}
	if note := calendarNote(spec, now); note != "" {
		return time.Time{}, invalid(what+".calendar_ids", "%s, so the %s could never fire: remove a calendar or change its exclusions", note, what)
	}
	if spec.Type == carillonv1.ScheduleType_SCHEDULE_TYPE_CRON {
		return time.Time{}, invalid(what+".schedule.cron", "%q never fires after %s (a date that does not exist, or a year gone by), so no %s can run on it: "+
			"fix the expression", spec.Cron, now.UTC().Format(time.RFC3339), what)
	}
	return next, nil
}

// calendarNote says why spec has no fire after t when its calendars are
// the reason (it has one without them); "" otherwise.
func calendarNote(spec schedule.Spec, t time.Time) string {
	if spec.Calendars == nil {
		return ""
	}
	bare := spec
	bare.Calendars = nil
	if raw, err := schedule.Next(bare, t); err != nil || raw.IsZero() {
		if raw, err = schedule.First(bare, t); err != nil || raw.IsZero() {
			return ""
		}
	}
	return fmt.Sprintf("the calendars exclude every fire of the schedule after %s (as far as the search looks: %d excluded days, ranges or instants)",
		t.UTC().Format(time.RFC3339), schedule.SkipBudget)
}

// jobSpec returns job j's schedule with its calendars; a calendar listed
// twice or missing is invalid_argument naming job.calendar_ids[i].
func (s *Server) jobSpec(ctx context.Context, j store.Job) (schedule.Spec, error) {
	spec := schedule.SpecOf(j)
	var err error
	spec.Calendars, err = s.calendarSet(ctx, "job.calendar_ids", j.CalendarIDs)
	return spec, err
}

func (s jobService) DeleteJob(ctx context.Context, req *carillonv1.DeleteJobRequest) (*carillonv1.DeleteJobResponse, error) {
	if err := s.cfg.Store.Jobs.Delete(ctx, req.Id); err != nil {
		return nil, s.toConnect(err)
	}
	return &carillonv1.DeleteJobResponse{}, nil
}

func (s jobService) StartJob(ctx context.Context, req *carillonv1.StartJobRequest) (*carillonv1.StartJobResponse, error) {
	j, err := s.cfg.Store.Jobs.Get(ctx, req.Id)
	if err != nil {
		return nil, s.toConnect(err)
	}
	if !j.Enabled {
		spec, err := s.jobSpec(ctx, j)
		if err != nil {
			return nil, err
		}
		next, err := s.firstFire(spec, s.cfg.NowFunc())
		if err != nil {
			return nil, err
		}
		if j, err = s.cfg.Store.Jobs.Start(ctx, req.Id, next, s.cfg.NowFunc()); err != nil {
			return nil, s.toConnect(err)
		}
		s.cfg.WakeFunc()
	}
	return &carillonv1.StartJobResponse{Job: jobToProto(j)}, nil
}

func (s jobService) StopJob(ctx context.Context, req *carillonv1.StopJobRequest) (*carillonv1.StopJobResponse, error) {
	j, err := s.cfg.Store.Jobs.Stop(ctx, req.Id, s.cfg.NowFunc())
	if err != nil {
		return nil, s.toConnect(err)
	}
	return &carillonv1.StopJobResponse{Job: jobToProto(j)}, nil
}

func (s jobService) TriggerJob(ctx context.Context, req *carillonv1.TriggerJobRequest) (*carillonv1.TriggerJobResponse, error) {
	for i, a := range req.Addresses {
		if err := checkURL(fmt.Sprintf("addresses[%d]", i), a); err != nil {
			return nil, err
		}
	}
	j, err := s.cfg.Store.Jobs.Get(ctx, req.JobId)
	if err != nil {
		return nil, s.toConnect(err)
	}
	runAt, err := s.checkRunAt(req)
	if err != nil {
		return nil, err
	}
	if err := s.refusePaused(ctx, j.GroupID, fmt.Sprintf("job %d", j.ID)); err != nil {
		return nil, err
	}
	if req.Param != nil {
		if err := checkParamTemplate("param", *req.Param, j.TimeZone, j.ParamTemplate); err != nil {
			return nil, err
		}
	}
	if err := s.checkGroupAddresses(ctx, j.GroupID, req.Addresses); err != nil {
		return nil, err
	}
	m := trigger.Manual{Param: req.Param, Addresses: req.Addresses, RunAt: runAt}
	if p := auth.FromContext(ctx); p != nil && p.Credential == auth.CredentialAPIToken {
		m.TriggerType = carillonv1.TriggerType_TRIGGER_TYPE_API // a program's call, not a person's
	}
	ids, err := s.cfg.Trigger.Dispatcher.TriggerJob(ctx, j, m)
	if err != nil {
		return nil, s.toConnect(err)
	}
	return &carillonv1.TriggerJobResponse{RunIds: ids}, nil
}

// Bounds of BackfillJob: the instants of one call, and how far it counts
// those of a range that holds more.
const (
	backfillMax      = 1000
	backfillCountMax = 1_000_000
)

// BackfillJob runs the job once for every instant its schedule has in
// [from, to) (trigger.Dispatcher.Backfill), or, with dry_run, lists them.
func (s jobService) BackfillJob(ctx context.Context, req *carillonv1.BackfillJobRequest) (*carillonv1.BackfillJobResponse, error) {
	from, to, err := backfillRange(req.From, req.To)
	if err != nil {
		return nil, err
	}
	j, err := s.cfg.Store.Jobs.Get(ctx, req.JobId)
	if err != nil {
		return nil, s.toConnect(err)
	}
	instants, err := backfillInstants(schedule.SpecOf(j), from, to, "job_id", fmt.Sprintf("job %d", j.ID))
	if err != nil {
		return nil, err
	}
	res := &carillonv1.BackfillJobResponse{Instants: timestamps(instants)}
	if req.DryRun || len(instants) == 0 {
		return res, nil
	}
	if res.RunIds, err = s.cfg.Trigger.Dispatcher.Backfill(ctx, j, instants); err != nil {
		return nil, s.toConnect(err)
	}
	return res, nil
}

// backfillRange checks a backfill's from and to: valid, from before to.
func backfillRange(fromTS, toTS *timestamppb.Timestamp) (from, to time.Time, err error) {
	if err := fromTS.CheckValid(); err != nil {
		return from, to, invalid("from", "%v", err)
	}
	if err := toTS.CheckValid(); err != nil {
		return from, to, invalid("to", "%v", err)
	}
	from, to = fromTS.AsTime(), toTS.AsTime()
	if !to.After(from) {
		return from, to, invalid("to", "must be after from (%s), got %s", from.UTC().Format(time.RFC3339), to.UTC().Format(time.RFC3339))
	}
	return from, to, nil
}

// backfillInstants returns the instants of spec, the schedule of what
// (named by field), in [from, to), refusing a schedule without instants
// of its own and a range of more than backfillMax.
func backfillInstants(spec schedule.Spec, from, to time.Time, field, what string) ([]time.Time, error) {
	instants, n, err := schedule.Instants(spec, from, to, backfillMax, backfillCountMax)
	switch {
	case errors.Is(err, schedule.ErrNoInstants):
		return nil, invalid(field, "%s has a %s schedule: %v; backfill needs a CRON or FIX_RATE schedule",
			what, strings.TrimPrefix(spec.Type.String(), "SCHEDULE_TYPE_"), err)
	case err != nil:
		return nil, invalid(field, "%s's schedule: %v", what, err)
	case n >= backfillCountMax:
		return nil, invalid("to", "[from, to) holds more than %d instants of %s's schedule; at most %d a call", backfillCountMax, what, backfillMax)
	case n > backfillMax:
		return nil, invalid("to", "[from, to) holds %d instants of %s's schedule; at most %d a call: split the range", n, what, backfillMax)
	}
	return instants, nil
}

// timestamps converts times.
func timestamps(ts []time.Time) []*timestamppb.Timestamp {
	out := make([]*timestamppb.Timestamp, len(ts))
	for i, t := range ts {
		out[i] = timestamppb.New(t)
	}
	return out
}

// runAtMax is how far ahead TriggerJob's run_at may be.
const runAtMax = 366 * 24 * time.Hour

// checkRunAt returns TriggerJob's run_at, zero for "now", refusing one
// that is not in the future, more than runAtMax ahead, or given with
// addresses (a run waiting for its instant keeps no route of its own).
func (s jobService) checkRunAt(req *carillonv1.TriggerJobRequest) (time.Time, error) {
	if req.RunAt == nil {
		return time.Time{}, nil
	}
	if err := req.RunAt.CheckValid(); err != nil {
		return time.Time{}, invalid("run_at", "%v", err)
	}
	at, now := req.RunAt.AsTime(), s.cfg.NowFunc()
	switch {
	case !at.After(now):
		return time.Time{}, invalid("run_at", "must be in the future (now %s), got %s", now.UTC().Format(time.RFC3339), at.UTC().Format(time.RFC3339Nano))
	case at.Sub(now) > runAtMax:
		return time.Time{}, invalid("run_at", "must be at most 366 days ahead, got %s", at.UTC().Format(time.RFC3339))
	case len(req.Addresses) > 0:
		return time.Time{}, invalid("run_at", "cannot be combined with addresses: a run that waits is routed when it starts")
	}
	return at, nil
}

// checkGroupAddresses refuses a TriggerJob address that is not one of the
// job's group's executors now (the live registered ones of an AUTO group,
// the configured ones of a MANUAL group): the admin sends runs, and the
// group's executor token with them, to no other address.
func (s jobService) checkGroupAddresses(ctx context.Context, groupID int64, addresses []string) error {
	if len(addresses) == 0 {
		return nil
	}
	g, err := s.cfg.Store.Groups.Get(ctx, groupID)
	if err != nil {
		return s.toConnect(err)
	}
	executors, err := s.cfg.Trigger.Dispatcher.Executors(ctx, g)
	if err != nil {
		return s.toConnect(err)
	}
	for i, a := range addresses {
		if !slices.Contains(executors, a) {
			return invalid(fmt.Sprintf("addresses[%d]", i),
				"must be an executor of the job's group %s now (%s), got %q", g.AppName, strings.Join(executors, ", "), a)
		}
	}
	return nil
}

func (s jobService) PreviewSchedule(ctx context.Context, req *carillonv1.PreviewScheduleRequest) (*carillonv1.PreviewScheduleResponse, error) {
	count := int(req.Count)
	if count == 0 {
		count = 5
	}
	if req.From != nil {
		if err := req.From.CheckValid(); err != nil {
			return nil, invalid("from", "must be a valid time between 0001-01-01 and 9999-12-31: %v", err)
		}
	}
	from := fromTS(req.From)
	if from.IsZero() {
		from = s.cfg.NowFunc()
	}
	spec := specOf(req.Schedule)
	if err := schedule.Check(spec); err != nil {
		return nil, invalidSchedule("schedule", err)
	}
	var err error
	if spec.Calendars, err = s.calendarSet(ctx, "calendar_ids", req.CalendarIds); err != nil {
		return nil, err
	}
	times, err := schedule.Preview(spec, from, count)
	if err != nil {
		return nil, s.toConnect(err)
	}
	res := &carillonv1.PreviewScheduleResponse{}
	if len(times) < count {
		last := from
		if len(times) > 0 {
			last = times[len(times)-1]
		}
		res.CalendarNote = calendarNote(spec, last)
	}
	for _, t := range times {
		if t.Year() > 9999 {
			break // past what a timestamp holds: the schedule has no fire to show
		}
		res.FireTimes = append(res.FireTimes, timestamppb.New(t))
	}
	return res, nil
}
