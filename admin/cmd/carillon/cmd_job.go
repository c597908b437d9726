package main

import (
	"context"
	"flag"
	"fmt"
	"math"
	"os"
	"strings"
	"time"

	"google.golang.org/protobuf/types/known/fieldmaskpb"
	"google.golang.org/protobuf/types/known/timestamppb"

	carillonv1 "github.com/carillonhq/carillon/proto/carillon/v1"
)

func cmdJob(ctx context.Context, e *cmdEnv, args []string) error {
	return sub(ctx, e, "job", args, map[string]func(context.Context, *cmdEnv, []string) error{
		"list": jobList, "get": jobGet, "create": jobCreate, "update": jobUpdate,
		"start": jobStart, "stop": jobStop, "delete": jobDelete, "trigger": jobTrigger, "preview": jobPreview,
	})
}

var jobHeader = []string{"ID", "GROUP", "DESCRIPTION", "SCHEDULE", "HANDLER", "ENABLED", "NEXT FIRE"}

func scheduleText(s *carillonv1.Schedule) string {
	var t string
	switch s.GetType() {
	case carillonv1.ScheduleType_SCHEDULE_TYPE_CRON:
		t = "cron " + s.Cron
	case carillonv1.ScheduleType_SCHEDULE_TYPE_FIX_RATE:
		t = fmt.Sprintf("every %ds", s.IntervalSeconds)
	case carillonv1.ScheduleType_SCHEDULE_TYPE_FIX_DELAY:
		t = fmt.Sprintf("%ds after each run", s.IntervalSeconds)
	default:
		return "none"
	}
	if s.TimeZone != "" {
		t += " (" + s.TimeZone + ")"
	}
	return t
}

func jobRow(j *carillonv1.Job) []string {
	handler := j.Handler
	if j.Script != nil {
		handler = "script:" + strings.ToLower(enumName(j.Script.Type, "SCRIPT_TYPE_"))
	}
	return []string{fmtID(j.Id), fmtID(j.GroupId), j.Description, scheduleText(j.Schedule), orDash(handler),
		fmt.Sprint(j.Enabled), fmtTime(j.NextFireAt)}
}

func jobFields(j *carillonv1.Job) [][2]string {
	return [][2]string{
		{"ID", fmtID(j.Id)}, {"Group", fmtID(j.GroupId)}, {"Description", j.Description}, {"Owner", orDash(j.Owner)},
		{"Schedule", scheduleText(j.Schedule)}, {"Handler", orDash(j.Handler)}, {"Param", orDash(j.Param)},
		{"Route", enumName(j.RouteStrategy, "ROUTE_STRATEGY_")}, {"Block", enumName(j.BlockStrategy, "BLOCK_STRATEGY_")},
		{"Misfire", enumName(j.MisfireStrategy, "MISFIRE_STRATEGY_")}, {"Timeout", fmt.Sprintf("%ds", j.TimeoutSeconds)},
		{"Retries", fmt.Sprint(j.RetryCount)}, {"Children", fmtIDs(j.ChildJobIds)}, {"Alarm e-mails", orDash(strings.Join(j.AlarmEmails, ","))},
		{"Enabled", fmt.Sprint(j.Enabled)}, {"Last fire", fmtTime(j.LastFireAt)}, {"Next fire", fmtTime(j.NextFireAt)},
	}
}

func jobList(ctx context.Context, e *cmdEnv, args []string) error {
	fs := e.flags("job list")
	group := fs.Int64("group", 0, "only jobs of this group")
	handler := fs.String("handler", "", "only jobs with this handler")
	text := fs.String("text", "", "only jobs whose description, owner or handler contains this")
	started := fs.Bool("started", false, "only started jobs")
	stopped := fs.Bool("stopped", false, "only stopped jobs")
	limit := fs.Int("limit", 100, "at most this many jobs")
	if _, err := e.parse(fs, args, 0, "no arguments"); err != nil {
		return err
	}
	req := &carillonv1.ListJobsRequest{GroupId: *group, Handler: *handler, Text: *text}
	switch {
	case *started && *stopped:
		return usagef("job list: --started and --stopped exclude each other")
	case *started:
		req.Enabled = new(true)
	case *stopped:
		req.Enabled = new(false)
	}
	all := &carillonv1.ListJobsResponse{}
	for len(all.Jobs) < *limit {
		req.PageSize = int32(min(*limit-len(all.Jobs), 500)) //nolint:gosec // range checked in job(), or bounded by min
		res, err := e.clients().job.ListJobs(ctx, req)
		if err != nil {
			return err
		}
		all.Jobs = append(all.Jobs, res.Jobs...)
		if req.PageToken = res.NextPageToken; req.PageToken == "" {
			break
		}
		all.NextPageToken = res.NextPageToken
	}
	var rows [][]string
	for _, j := range all.Jobs {
		rows = append(rows, jobRow(j))
	}
	return e.print(all, jobHeader, rows)
}

func jobID(e *cmdEnv, fs *flag.FlagSet, args []string) (int64, error) {
	pos, err := e.parse(fs, args, 1, "a job id")
	if err != nil {
		return 0, err
	}
	return parseID("job", pos[0])
}

func jobGet(ctx context.Context, e *cmdEnv, args []string) error {
	id, err := jobID(e, e.flags("job get"), args)
	if err != nil {
		return err
	}
	res, err := e.clients().job.GetJob(ctx, &carillonv1.GetJobRequest{Id: id})
	if err != nil {
		return err
	}
	return e.printFields(res, jobFields(res.Job))
}

// jobFlags are the flags that describe a job, for create and update.
type jobFlags struct {
	fs                                         *flag.FlagSet
	group                                      *int64
	description, owner, handler, param, emails *string
	cron, tz, route, block, misfire, children  *string
	every, delay, timeout, retries             *int
	none, start                                *bool
	scriptFile, scriptType                     *string
}

func newJobFlags(fs *flag.FlagSet) *jobFlags {
	return &jobFlags{
		fs:          fs,
		group:       fs.Int64("group", 0, "executor group id"),
		description: fs.String("description", "", "what the job does"),
		owner:       fs.String("owner", "", "who to ask about it"),
		handler:     fs.String("handler", "", "handler name in the executor"),
		param:       fs.String("param", "", "param passed to the handler"),
		emails:      fs.String("emails", "", "alarm e-mail addresses, comma-separated"),
		cron:        fs.String("cron", "", "schedule: Quartz cron with seconds, e.g. \"0 0/5 * * * ?\""),
		every:       fs.Int("every", 0, "schedule: every N seconds (FIX_RATE)"),
		delay:       fs.Int("delay", 0, "schedule: N seconds after each run finishes (FIX_DELAY)"),
		none:        fs.Bool("no-schedule", false, "schedule: none (manual, API, parent or retry only)"),
		tz:          fs.String("tz", "", "IANA time zone of the schedule (default: the admin's)"),
		route:       fs.String("route", "", "route strategy: first, last, round_robin, random, consistent_hash, ..."),
		block:       fs.String("block", "", "block strategy: serial, discard_later, cover_early"),
		misfire:     fs.String("misfire", "", "misfire strategy: do_nothing, fire_once_now"),
		timeout:     fs.Int("timeout", 0, "timeout in seconds (0: none)"),
		retries:     fs.Int("retries", 0, "extra attempts after a failed run"),
		children:    fs.String("children", "", "child job ids, comma-separated"),
		scriptFile:  fs.String("script-file", "", "script job: the source file (with --script-type)"),
		scriptType:  fs.String("script-type", "shell", "script job: shell, python, nodejs, php, powershell"),
		start:       fs.Bool("start", false, "create: start the schedule at once"),
	}
}

// job builds the job from the flags and returns the update mask of the
// flags that were set.
func (f *jobFlags) job() (*carillonv1.Job, []string, error) {
	set := map[string]bool{}
	f.fs.Visit(func(fl *flag.Flag) { set[fl.Name] = true })
	for name, v := range map[string]int{"timeout": *f.timeout, "retries": *f.retries, "every": *f.every, "delay": *f.delay} {
		if v < math.MinInt32 || v > math.MaxInt32 {
			return nil, nil, usagef("--%s: %d is out of range", name, v)
		}
	}
	j := &carillonv1.Job{GroupId: *f.group, Description: *f.description, Owner: *f.owner, Handler: *f.handler, Param: *f.param,
		AlarmEmails: splitList(*f.emails), TimeoutSeconds: int32(*f.timeout), RetryCount: int32(*f.retries), Enabled: *f.start} //nolint:gosec // range checked in job(), or bounded by min
	var mask []string
	for flagName, path := range map[string]string{
		"group": "group_id", "description": "description", "owner": "owner", "handler": "handler", "param": "param",
		"emails": "alarm_emails", "timeout": "timeout_seconds", "retries": "retry_count", "children": "child_job_ids",
		"route": "route_strategy", "block": "block_strategy", "misfire": "misfire_strategy", "script-file": "script",
	} {
		if set[flagName] {
			mask = append(mask, path)
		}
	}
	var err error
	if j.ChildJobIds, err = parseIDList("children", *f.children); err != nil {
		return nil, nil, err
	}
	if *f.route != "" {
		n, err := parseEnum("route", *f.route, carillonv1.RouteStrategy(0).Descriptor(), "ROUTE_STRATEGY_")
		if err != nil {
			return nil, nil, err
		}
		j.RouteStrategy = carillonv1.RouteStrategy(n)
	}
	if *f.block != "" {
		n, err := parseEnum("block", *f.block, carillonv1.BlockStrategy(0).Descriptor(), "BLOCK_STRATEGY_")
		if err != nil {
			return nil, nil, err
		}
		j.BlockStrategy = carillonv1.BlockStrategy(n)
	}
	if *f.misfire != "" {
		n, err := parseEnum("misfire", *f.misfire, carillonv1.MisfireStrategy(0).Descriptor(), "MISFIRE_STRATEGY_")
		if err != nil {
			return nil, nil, err
		}
		j.MisfireStrategy = carillonv1.MisfireStrategy(n)
	}
	if *f.scriptFile != "" {
		src, err := os.ReadFile(*f.scriptFile)
		if err != nil {
			return nil, nil, usagef("--script-file: %v", err)
		}
		n, err := parseEnum("script-type", *f.scriptType, carillonv1.ScriptType(0).Descriptor(), "SCRIPT_TYPE_")
		if err != nil {
			return nil, nil, err
		}
		j.Script = &carillonv1.Script{Type: carillonv1.ScriptType(n), Source: string(src)}
	}
	kinds := 0
	for _, k := range []string{"cron", "every", "delay", "no-schedule"} {
		if set[k] {
			kinds++
		}
	}
	if kinds > 1 {
		return nil, nil, usagef("give one of --cron, --every, --delay, --no-schedule")
	}
	sched := &carillonv1.Schedule{TimeZone: *f.tz}
	switch {
	case set["cron"]:
		sched.Type, sched.Cron = carillonv1.ScheduleType_SCHEDULE_TYPE_CRON, *f.cron
	case set["every"]:
		sched.Type, sched.IntervalSeconds = carillonv1.ScheduleType_SCHEDULE_TYPE_FIX_RATE, int32(*f.every) //nolint:gosec // range checked in job(), or bounded by min
	case set["delay"]:
		sched.Type, sched.IntervalSeconds = carillonv1.ScheduleType_SCHEDULE_TYPE_FIX_DELAY, int32(*f.delay) //nolint:gosec // range checked in job(), or bounded by min
	case set["no-schedule"]:
		sched.Type = carillonv1.ScheduleType_SCHEDULE_TYPE_NONE
	}
	j.Schedule = sched
	if kinds > 0 || set["tz"] {
		mask = append(mask, "schedule")
	}
	return j, mask, nil
}

func jobCreate(ctx context.Context, e *cmdEnv, args []string) error {
	fs := e.flags("job create")
	f := newJobFlags(fs)
	if _, err := e.parse(fs, args, 0, "flags only: carillon job create --group ID --description D --handler H --cron EXPR"); err != nil {
		return err
	}
	j, _, err := f.job()
	if err != nil {
		return err
	}
	if j.Schedule.Type == carillonv1.ScheduleType_SCHEDULE_TYPE_UNSPECIFIED {
		return usagef("job create: give a schedule: --cron, --every, --delay or --no-schedule")
	}
	res, err := e.clients().job.CreateJob(ctx, &carillonv1.CreateJobRequest{Job: j})
	if err != nil {
		return err
	}
	return e.printFields(res, jobFields(res.Job))
}

func jobUpdate(ctx context.Context, e *cmdEnv, args []string) error {
	fs := e.flags("job update")
	f := newJobFlags(fs)
	id, err := jobID(e, fs, args)
	if err != nil {
		return err
	}
	j, mask, err := f.job()
	if err != nil {
		return err
	}
	if len(mask) == 0 {
		return usagef("job update: nothing to change: give the flags of the fields to change")
	}
	if containsPath(mask, "schedule") && j.Schedule.Type == carillonv1.ScheduleType_SCHEDULE_TYPE_UNSPECIFIED {
		// Only --tz: keep the type and expression.
		old, err := e.clients().job.GetJob(ctx, &carillonv1.GetJobRequest{Id: id})
		if err != nil {
			return err
		}
		old.Job.Schedule.TimeZone = j.Schedule.TimeZone
		j.Schedule = old.Job.Schedule
	}
	j.Id = id
	res, err := e.clients().job.UpdateJob(ctx, &carillonv1.UpdateJobRequest{Job: j, UpdateMask: &fieldmaskpb.FieldMask{Paths: mask}})
	if err != nil {
		return err
	}
	return e.printFields(res, jobFields(res.Job))
}

func containsPath(paths []string, p string) bool {
	for _, x := range paths {
		if x == p {
			return true
		}
	}
	return false
}

func jobStart(ctx context.Context, e *cmdEnv, args []string) error {
	id, err := jobID(e, e.flags("job start"), args)
	if err != nil {
		return err
	}
	res, err := e.clients().job.StartJob(ctx, &carillonv1.StartJobRequest{Id: id})
	if err != nil {
		return err
	}
	return e.print(res, jobHeader, [][]string{jobRow(res.Job)})
}

func jobStop(ctx context.Context, e *cmdEnv, args []string) error {
	id, err := jobID(e, e.flags("job stop"), args)
	if err != nil {
		return err
	}
	res, err := e.clients().job.StopJob(ctx, &carillonv1.StopJobRequest{Id: id})
	if err != nil {
		return err
	}
	return e.print(res, jobHeader, [][]string{jobRow(res.Job)})
}

func jobDelete(ctx context.Context, e *cmdEnv, args []string) error {
	id, err := jobID(e, e.flags("job delete"), args)
	if err != nil {
		return err
	}
	res, err := e.clients().job.DeleteJob(ctx, &carillonv1.DeleteJobRequest{Id: id})
	if err != nil {
		return err
	}
	if e.json {
		return e.printJSON(res)
	}
	fmt.Fprintf(e.io.out, "deleted job %d\n", id)
	return nil
}

// stringList is a repeatable string flag.
type stringList []string

func (l *stringList) String() string     { return strings.Join(*l, ",") }
func (l *stringList) Set(s string) error { *l = append(*l, s); return nil }

func jobTrigger(ctx context.Context, e *cmdEnv, args []string) error {
	fs := e.flags("job trigger")
	param := fs.String("param", "", "param for this run instead of the job's")
	var addrs stringList
	fs.Var(&addrs, "address", "executor URL to route among instead of the group's (repeatable)")
	id, err := jobID(e, fs, args)
	if err != nil {
		return err
	}
	req := &carillonv1.TriggerJobRequest{JobId: id, Addresses: addrs}
	fs.Visit(func(f *flag.Flag) {
		if f.Name == "param" {
			req.Param = param
		}
	})
	res, err := e.clients().job.TriggerJob(ctx, req)
	if err != nil {
		return err
	}
	var rows [][]string
	for _, r := range res.RunIds {
		rows = append(rows, []string{fmtID(r)})
	}
	return e.print(res, []string{"RUN"}, rows)
}

func jobPreview(ctx context.Context, e *cmdEnv, args []string) error {
	fs := e.flags("job preview")
	f := newJobFlags(fs)
	count := fs.Int("count", 5, "how many fire times (at most 100)")
	from := fs.String("from", "", "RFC 3339 time to start from (default: now)")
	pos, err := e.parse(fs, args, -1, "a job id, or schedule flags")
	if err != nil {
		return err
	}
	j, _, err := f.job()
	if err != nil {
		return err
	}
	req := &carillonv1.PreviewScheduleRequest{Schedule: j.Schedule, Count: int32(*count)} //nolint:gosec // range checked in job(), or bounded by min
	switch {
	case len(pos) > 1:
		return usagef("job preview: want at most one job id")
	case len(pos) == 1:
		id, err := parseID("job", pos[0])
		if err != nil {
			return err
		}
		res, err := e.clients().job.GetJob(ctx, &carillonv1.GetJobRequest{Id: id})
		if err != nil {
			return err
		}
		req.Schedule = res.Job.Schedule
	case j.Schedule.Type == carillonv1.ScheduleType_SCHEDULE_TYPE_UNSPECIFIED:
		return usagef("job preview: give a job id or a schedule (--cron, --every, --delay)")
	}
	if *from != "" {
		t, err := time.Parse(time.RFC3339, *from)
		if err != nil {
			return usagef("--from: %v", err)
		}
		req.From = timestamppb.New(t)
	}
	res, err := e.clients().job.PreviewSchedule(ctx, req)
	if err != nil {
		return err
	}
	var rows [][]string
	for _, t := range res.FireTimes {
		rows = append(rows, []string{t.AsTime().Format(time.RFC3339)})
	}
	return e.print(res, []string{"FIRE TIME (UTC)"}, rows)
}
