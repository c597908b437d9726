package main

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/fieldmaskpb"
	"google.golang.org/protobuf/types/known/timestamppb"

	carillonv1 "github.com/carillonhq/carillon/proto/carillon/v1"
)

func jobCmd(e *cmdEnv) *cobra.Command {
	return noun("job", "Jobs: what runs where and when",
		jobListCmd(e), jobGetCmd(e), jobCreateCmd(e), jobUpdateCmd(e), jobStartCmd(e), jobStopCmd(e),
		jobDeleteCmd(e), jobTriggerCmd(e), jobBackfillCmd(e), jobPreviewCmd(e))
}

var jobHeader = []string{"ID", "GROUP", "NAME", "DESCRIPTION", "SCHEDULE", "HANDLER", "ENABLED", "NEXT FIRE"}

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

func handlerText(j *carillonv1.Job) string {
	if j.Script != nil {
		return "script:" + strings.ToLower(enumName(j.Script.Type, "SCRIPT_TYPE_"))
	}
	return orDash(j.Handler)
}

func jobRow(j *carillonv1.Job) []string {
	return []string{fmtID(j.Id), fmtID(j.GroupId), orDash(j.Name), j.Description, scheduleText(j.Schedule), handlerText(j),
		fmt.Sprint(j.Enabled), fmtTime(j.NextFireAt)}
}

// jobFields are every field of a job, for job get, create and update.
func jobFields(j *carillonv1.Job) [][2]string {
	retryDelay := "10s (default)"
	if j.RetryDelaySeconds > 0 {
		retryDelay = fmtSeconds(j.RetryDelaySeconds)
	}
	script := "-"
	if j.Script != nil {
		script = strings.ToLower(enumName(j.Script.Type, "SCRIPT_TYPE_")) + ", updated " + fmtTime(j.Script.UpdatedAt) + ":\n" + j.Script.Source
	}
	return [][2]string{
		{"ID", fmtID(j.Id)}, {"Group", fmtID(j.GroupId)}, {"Name", orDash(j.Name)}, {"Description", j.Description}, {"Owner", orDash(j.Owner)},
		{"Schedule", scheduleText(j.Schedule)}, {"Handler", orDash(j.Handler)}, {"Script", script}, {"Param", orDash(j.Param)},
		{"Route", enumName(j.RouteStrategy, "ROUTE_STRATEGY_")}, {"Block", enumName(j.BlockStrategy, "BLOCK_STRATEGY_")},
		{"Misfire", enumName(j.MisfireStrategy, "MISFIRE_STRATEGY_")}, {"Timeout", fmtSeconds(j.TimeoutSeconds)},
		{"Retries", fmt.Sprint(j.RetryCount)}, {"Retry delay", retryDelay}, {"Retry backoff", yesNo(j.RetryBackoff)},
		{"Children", fmtIDs(j.ChildJobIds)}, {"Calendars", fmtIDs(j.CalendarIds)}, {"Alarm e-mails", orDash(strings.Join(j.AlarmEmails, ","))},
		{"Alarm webhook", orDash(j.AlarmWebhookUrl)}, {"Alarm format", webhookFormatText(j)},
		{"Alarm every failure", yesNo(j.AlarmEveryFailure)},
		{"Param is a template", yesNo(j.ParamTemplate)},
		{"Max concurrency", capText(j.MaxConcurrency)},
		{"Enabled", fmt.Sprint(j.Enabled)}, {"Last fire", fmtTime(j.LastFireAt)}, {"Next fire", fmtTime(j.NextFireAt)},
		{"Created", fmtTime(j.CreatedAt)}, {"Updated", fmtTime(j.UpdatedAt)},
	}
}

// webhookFormatText shows what a job's alarm webhook receives: its
// format, whether a secret signs it (never the secret), its template.
func webhookFormatText(j *carillonv1.Job) string {
	s := "json"
	if j.AlarmWebhookFormat != carillonv1.AlarmWebhookFormat_ALARM_WEBHOOK_FORMAT_UNSPECIFIED {
		s = strings.ToLower(enumName(j.AlarmWebhookFormat, "ALARM_WEBHOOK_FORMAT_"))
	}
	if j.HasAlarmWebhookSecret {
		s += ", signed (secret set)"
	}
	if j.AlarmWebhookTemplate != "" {
		s += ":\n" + j.AlarmWebhookTemplate
	}
	return s
}

// capText shows a max_concurrency: "-" for no cap.
func capText(n int32) string {
	if n == 0 {
		return "-"
	}
	return fmt.Sprint(n)
}

func jobListCmd(e *cmdEnv) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List jobs, filtered by group, handler, text or state",
		Args:  exactArgs(0, "no arguments"),
	}
	fs := cmd.Flags()
	group := fs.Int64("group", 0, "only jobs of this group")
	handler := fs.String("handler", "", "only jobs with this handler")
	text := fs.String("text", "", "only jobs whose description, owner or handler contains this")
	started := fs.Bool("started", false, "only started jobs")
	stopped := fs.Bool("stopped", false, "only stopped jobs")
	limit := fs.Int("limit", 100, "at most this many jobs")
	page := ruleMax(&carillonv1.ListJobsRequest{}, "page_size")
	cmd.MarkFlagsMutuallyExclusive("started", "stopped")
	return e.leaf(cmd, func(ctx context.Context, _ []string) error {
		req := &carillonv1.ListJobsRequest{GroupId: *group, Handler: *handler, Text: *text}
		switch {
		case *started:
			req.Enabled = new(true)
		case *stopped:
			req.Enabled = new(false)
		}
		all := &carillonv1.ListJobsResponse{}
		c := e.clients()
		for len(all.Jobs) < *limit {
			req.PageSize = int32(min(*limit-len(all.Jobs), page)) //nolint:gosec // bounded by min
			res, err := c.Jobs.ListJobs(ctx, req)
			if err != nil {
				return err
			}
			all.Jobs = append(all.Jobs, res.Jobs...)
			all.NextPageToken = res.NextPageToken
			if req.PageToken = res.NextPageToken; req.PageToken == "" {
				break
			}
		}
		var rows [][]string
		for _, j := range all.Jobs {
			rows = append(rows, jobRow(j))
		}
		return e.print(all, jobHeader, rows)
	})
}

// jobIDCmd makes cmd a client command on one job id.
func (e *cmdEnv) jobIDCmd(cmd *cobra.Command, f func(ctx context.Context, id int64) error) *cobra.Command {
	return e.idCmd(cmd, "job", f)
}

func jobGetCmd(e *cmdEnv) *cobra.Command {
	return e.jobIDCmd(&cobra.Command{Use: "get ID", Short: "Show every field of a job"}, func(ctx context.Context, id int64) error {
		res, err := e.clients().Jobs.GetJob(ctx, &carillonv1.GetJobRequest{Id: id})
		if err != nil {
			return err
		}
		return e.printFields(res, jobFields(res.Job))
	})
}

// jobFlags are the flags that describe a job, for create and update.
type jobFlags struct {
	fs                                         *pflag.FlagSet
	proc                                       procEnv // where --script-file is
	group                                      *int64
	description, owner, handler, param, emails *string
	name                                       *string
	cron, tz, route, block, misfire, children  *string
	webhook, calendars                         *string
	alarmFormat, alarmSecret, alarmTemplate    *string
	every, delay, timeout                      *seconds
	retries, maxConcurrency                    *int
	retryDelay                                 *time.Duration
	none, backoff, everyFailure, paramTemplate *bool
	scriptFile, scriptType                     *string
}

// scheduleFlags defines the flags of a schedule, for create, update and
// preview.
func scheduleFlags(fs *pflag.FlagSet, f *jobFlags) {
	f.cron = fs.String("cron", "", "schedule: Quartz cron with seconds, e.g. \"0 0/5 * * * ?\"")
	f.every, f.delay = new(seconds), new(seconds)
	fs.Var(f.every, "every", "schedule: at this fixed rate (FIX_RATE), a duration in whole seconds (30s, 5m, 1h) or a number of seconds")
	fs.Var(f.delay, "delay", "schedule: this long after each run finishes (FIX_DELAY), a duration in whole seconds (30s, 5m) or a number of seconds")
	f.none = fs.Bool("no-schedule", false, "schedule: none (manual, API, parent or retry only)")
	f.tz = fs.String("tz", "", "IANA time zone of the schedule, e.g. Europe/Berlin (default: the admin's)")
}

func newJobFlags(fs *pflag.FlagSet, proc procEnv) *jobFlags {
	f := &jobFlags{
		fs:          fs,
		proc:        proc,
		group:       fs.Int64("group", 0, "executor group id"),
		description: fs.String("description", "", "what the job does"),
		name:        fs.String("name", "", "a name unique in its group: letters, digits, '.', '_', '-' (carillon apply names jobs by it)"),
		owner:       fs.String("owner", "", "who to ask about it"),
		handler:     fs.String("handler", "", "handler name in the executor"),
		param:       fs.String("param", "", "param passed to the handler"),
		route: fs.String("route", "", "route strategy: "+
			enumValues(carillonv1.RouteStrategy(0).Descriptor(), "ROUTE_STRATEGY_")+" (default first)"),
		block: fs.String("block", "", "block strategy: "+
			enumValues(carillonv1.BlockStrategy(0).Descriptor(), "BLOCK_STRATEGY_")+" (default serial)"),
		misfire: fs.String("misfire", "", "misfire strategy: "+
			enumValues(carillonv1.MisfireStrategy(0).Descriptor(), "MISFIRE_STRATEGY_")+" (default do_nothing)"),
		retries: fs.Int("retries", 0, "extra attempts after a failed run"),
		maxConcurrency: fs.Int("max-concurrency", 0, "at most this many runs of the job running at once over all executors; "+
			"more wait, or are skipped under --block discard_later (0: no cap)"),
		retryDelay:   fs.Duration("retry-delay", 0, "time between a failed attempt and its retry, whole seconds, e.g. 30s (0: the default, 10s)"),
		backoff:      fs.Bool("backoff", false, "double the retry delay after each failed attempt (capped at 1h); --backoff=false turns it off"),
		children:     fs.String("children", "", "child job ids, comma-separated: fired after a run succeeds"),
		calendars:    fs.String("calendar", "", "calendar ids, comma-separated: the schedule skips the instants they exclude (carillon calendar list)"),
		emails:       fs.String("emails", "", "alarm e-mail addresses, comma-separated"),
		webhook:      fs.String("alarm-webhook", "", "URL that receives this job's alarms as a JSON POST (ADMINs, or URLs under --alarm-webhook-allow)"),
		everyFailure: fs.Bool("alarm-every-failure", false, "alarm on every failed attempt, not only when a run fails for good"),
		alarmFormat: fs.String("alarm-format", "", "what --alarm-webhook receives: "+
			enumValues(carillonv1.AlarmWebhookFormat(0).Descriptor(), "ALARM_WEBHOOK_FORMAT_")+" (default json)"),
		alarmSecret: fs.String("alarm-secret", "", "key that signs what --alarm-webhook receives (dingtalk, feishu: as they document; "+
			"json, template: an X-Carillon-Signature header); never shown again; kept by updates without this flag, --alarm-secret '' clears it"),
		alarmTemplate: fs.String("alarm-template", "", "with --alarm-format template: the Go text/template over the alarm that --alarm-webhook receives, "+
			`e.g. '{"text": {{json .Message}}}'`),
		paramTemplate: fs.Bool("param-template", false, "the param is a Go text/template rendered for each run over "+
			".ScheduledAt (in the job's time zone), .JobID, .RunID, .Attempt, .ShardIndex, .ShardTotal, "+
			`e.g. '{{(.ScheduledAt.AddDate 0 0 -1).Format "20060102"}}'`),
		scriptFile: fs.String("script-file", "", "script job: the source file (with --script-type)"),
		scriptType: fs.String("script-type", "shell", "script job: "+
			enumValues(carillonv1.ScriptType(0).Descriptor(), "SCRIPT_TYPE_")),
	}
	f.timeout = new(seconds)
	fs.Var(f.timeout, "timeout", "timeout of a run, a duration in whole seconds (90s, 5m) or a number of seconds (0: none)")
	scheduleFlags(fs, f)
	_ = cobra.MarkFlagFilename(fs, "script-file")
	return f
}

// maskPaths maps job flags to the fields they set (update masks).
var maskPaths = map[string]string{ //nolint:gosec // field names (alarm_webhook_secret), not credentials
	"group": "group_id", "name": "name", "description": "description", "owner": "owner", "handler": "handler", "param": "param",
	"emails": "alarm_emails", "timeout": "timeout_seconds", "retries": "retry_count", "children": "child_job_ids",
	"route": "route_strategy", "block": "block_strategy", "misfire": "misfire_strategy", "script-file": "script",
	"retry-delay": "retry_delay_seconds", "backoff": "retry_backoff", "alarm-webhook": "alarm_webhook_url",
	"alarm-format": "alarm_webhook_format", "alarm-secret": "alarm_webhook_secret", "alarm-template": "alarm_webhook_template",
	"alarm-every-failure": "alarm_every_failure", "param-template": "param_template", "calendar": "calendar_ids", "max-concurrency": "max_concurrency",
}

// job builds the job from the flags and returns the update mask of the
// flags that were set.
func (f *jobFlags) job() (*carillonv1.Job, []string, error) {
	if *f.retries < 0 || *f.retries > math.MaxInt32 {
		return nil, nil, usagef("--retries: %d is out of range", *f.retries)
	}
	if *f.maxConcurrency < 0 || *f.maxConcurrency > math.MaxInt32 {
		return nil, nil, usagef("--max-concurrency: %d is out of range", *f.maxConcurrency)
	}
	if *f.retryDelay < 0 || *f.retryDelay%time.Second != 0 || *f.retryDelay > math.MaxInt32*time.Second {
		return nil, nil, usagef("--retry-delay: want whole seconds, at least 0: %s", *f.retryDelay)
	}
	j := &carillonv1.Job{
		GroupId: *f.group, Name: *f.name, Description: *f.description, Owner: *f.owner, Handler: *f.handler, Param: *f.param,
		AlarmEmails: splitList(*f.emails), TimeoutSeconds: int32(*f.timeout), RetryCount: int32(*f.retries), //nolint:gosec // range checked above and by seconds.Set
		RetryDelaySeconds: int32(*f.retryDelay / time.Second), RetryBackoff: *f.backoff, //nolint:gosec // range checked above
		AlarmWebhookUrl: *f.webhook, AlarmEveryFailure: *f.everyFailure, ParamTemplate: *f.paramTemplate,
		AlarmWebhookSecret: *f.alarmSecret, AlarmWebhookTemplate: *f.alarmTemplate,
		MaxConcurrency: int32(*f.maxConcurrency), //nolint:gosec // range checked above
	}
	var mask []string
	for flagName, path := range maskPaths {
		if f.fs.Changed(flagName) {
			mask = append(mask, path)
		}
	}
	slices.Sort(mask)
	var err error
	if j.ChildJobIds, err = parseIDList("children", *f.children); err != nil {
		return nil, nil, err
	}
	if j.CalendarIds, err = parseIDList("calendar", *f.calendars); err != nil {
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
	if *f.alarmFormat != "" {
		n, err := parseEnum("alarm-format", *f.alarmFormat, carillonv1.AlarmWebhookFormat(0).Descriptor(), "ALARM_WEBHOOK_FORMAT_")
		if err != nil {
			return nil, nil, err
		}
		j.AlarmWebhookFormat = carillonv1.AlarmWebhookFormat(n)
	}
	if *f.misfire != "" {
		n, err := parseEnum("misfire", *f.misfire, carillonv1.MisfireStrategy(0).Descriptor(), "MISFIRE_STRATEGY_")
		if err != nil {
			return nil, nil, err
		}
		j.MisfireStrategy = carillonv1.MisfireStrategy(n)
	}
	if *f.scriptFile != "" {
		src, err := os.ReadFile(f.proc.path(*f.scriptFile))
		if err != nil {
			return nil, nil, usagef("--script-file: %v", err)
		}
		n, err := parseEnum("script-type", *f.scriptType, carillonv1.ScriptType(0).Descriptor(), "SCRIPT_TYPE_")
		if err != nil {
			return nil, nil, err
		}
		j.Script = &carillonv1.Script{Type: carillonv1.ScriptType(n), Source: string(src)}
	}
	sched, err := f.schedule()
	if err != nil {
		return nil, nil, err
	}
	j.Schedule = sched
	if sched.Type != carillonv1.ScheduleType_SCHEDULE_TYPE_UNSPECIFIED || f.fs.Changed("tz") {
		mask = append(mask, "schedule")
	}
	return j, mask, nil
}

// schedule builds the schedule of the flags; its type is UNSPECIFIED when
// no schedule flag but perhaps --tz was given.
func (f *jobFlags) schedule() (*carillonv1.Schedule, error) {
	var kinds []string
	for _, k := range []string{"cron", "every", "delay", "no-schedule"} {
		if f.fs.Changed(k) {
			kinds = append(kinds, "--"+k)
		}
	}
	if len(kinds) > 1 {
		return nil, usagef("give one of --cron, --every, --delay, --no-schedule, not %s", strings.Join(kinds, " and "))
	}
	sched := &carillonv1.Schedule{TimeZone: *f.tz}
	switch {
	case f.fs.Changed("cron"):
		sched.Type, sched.Cron = carillonv1.ScheduleType_SCHEDULE_TYPE_CRON, *f.cron
	case f.fs.Changed("every"):
		sched.Type, sched.IntervalSeconds = carillonv1.ScheduleType_SCHEDULE_TYPE_FIX_RATE, int32(*f.every) //nolint:gosec // range checked by seconds.Set
	case f.fs.Changed("delay"):
		sched.Type, sched.IntervalSeconds = carillonv1.ScheduleType_SCHEDULE_TYPE_FIX_DELAY, int32(*f.delay) //nolint:gosec // range checked by seconds.Set
	case f.fs.Changed("no-schedule"):
		sched.Type = carillonv1.ScheduleType_SCHEDULE_TYPE_NONE
	}
	return sched, nil
}

func jobCreateCmd(e *cmdEnv) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "create --group ID --description D --handler H SCHEDULE [flags]",
		Short: "Create a job",
		Long: `Create a job: the group whose executors run it, a description, the handler
(or a script), and a schedule: one of --cron, --every, --delay, --no-schedule.
--start starts the schedule at once; otherwise "carillon job start ID" does.`,
		Example: "  carillon job create --group 1 --description 'say hello' --handler hello --param carillon \\\n" +
			"    --cron '*/10 * * * * ?' --start\n" +
			"  carillon job create --group 1 --description nightly --handler report --cron '0 0 2 * * ?' --tz Europe/Berlin \\\n" +
			"    --retries 3 --retry-delay 1m --backoff --alarm-webhook https://hooks.example.com/carillon",
		Args: exactArgs(0, "flags only: carillon job create --group ID --description D --handler H --cron EXPR"),
	}
	f := newJobFlags(cmd.Flags(), e.proc)
	start := cmd.Flags().Bool("start", false, "start the schedule at once")
	return e.leaf(cmd, func(ctx context.Context, _ []string) error {
		j, _, err := f.job()
		if err != nil {
			return err
		}
		if j.Schedule.Type == carillonv1.ScheduleType_SCHEDULE_TYPE_UNSPECIFIED {
			return usagef("job create: give a schedule: --cron, --every, --delay or --no-schedule")
		}
		j.Enabled = *start
		res, err := e.clients().Jobs.CreateJob(ctx, &carillonv1.CreateJobRequest{Job: j})
		if err != nil {
			return err
		}
		return e.printFields(res, jobFields(res.Job))
	})
}

func jobUpdateCmd(e *cmdEnv) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "update ID [flags]",
		Short: "Change a job; only the fields of the flags given change",
		Long: `Change a job: only the fields of the flags given change (an update mask).
--tz alone keeps the schedule and changes its zone; a bool flag is turned off
with =false (--backoff=false).`,
		Example: "  carillon job update 1 --param world --cron '0 0 12 * * ?' --tz Europe/Berlin\n  carillon job update 1 --backoff=false",
	}
	f := newJobFlags(cmd.Flags(), e.proc)
	return e.jobIDCmd(cmd, func(ctx context.Context, id int64) error {
		j, mask, err := f.job()
		if err != nil {
			return err
		}
		if len(mask) == 0 {
			return usagef("job update: nothing to change: give the flags of the fields to change")
		}
		if slices.Contains(mask, "schedule") && j.Schedule.Type == carillonv1.ScheduleType_SCHEDULE_TYPE_UNSPECIFIED {
			// Only --tz: keep the type and expression.
			old, err := e.clients().Jobs.GetJob(ctx, &carillonv1.GetJobRequest{Id: id})
			if err != nil {
				return err
			}
			old.Job.Schedule.TimeZone = j.Schedule.TimeZone
			j.Schedule = old.Job.Schedule
		}
		j.Id = id
		res, err := e.clients().Jobs.UpdateJob(ctx, &carillonv1.UpdateJobRequest{Job: j, UpdateMask: &fieldmaskpb.FieldMask{Paths: mask}})
		if err != nil {
			return err
		}
		return e.printFields(res, jobFields(res.Job))
	})
}

func jobStartCmd(e *cmdEnv) *cobra.Command {
	cmd := &cobra.Command{Use: "start ID...", Short: "Start jobs' schedules; several ids: all or none (StartJobs)",
		Example: "  carillon job start 1\n  carillon job start 3 4 7"}
	return e.jobIDsCmd(cmd, func(ctx context.Context, id int64) (proto.Message, *carillonv1.Job, error) {
		res, err := e.clients().Jobs.StartJob(ctx, &carillonv1.StartJobRequest{Id: id})
		return res, res.GetJob(), err
	}, func(ctx context.Context, ids []int64) ([]*carillonv1.Job, error) {
		res, err := e.clients().Jobs.StartJobs(ctx, &carillonv1.StartJobsRequest{Ids: ids})
		return res.GetJobs(), err
	})
}

func jobStopCmd(e *cmdEnv) *cobra.Command {
	cmd := &cobra.Command{Use: "stop ID...", Short: "Stop jobs' schedules: no fire of them happens after the call returns; several ids: all or none (StopJobs)",
		Example: "  carillon job stop 1\n  carillon job stop 3 4 5"}
	return e.jobIDsCmd(cmd, func(ctx context.Context, id int64) (proto.Message, *carillonv1.Job, error) {
		res, err := e.clients().Jobs.StopJob(ctx, &carillonv1.StopJobRequest{Id: id})
		return res, res.GetJob(), err
	}, func(ctx context.Context, ids []int64) ([]*carillonv1.Job, error) {
		res, err := e.clients().Jobs.StopJobs(ctx, &carillonv1.StopJobsRequest{Ids: ids})
		return res.GetJobs(), err
	})
}

// jobIDsCmd makes cmd call one for its one job id, or many for its several
// (in one call: all or none), and print the jobs they return (with
// --json: the reply of one id, or the jobs of several as a
// ListJobsResponse).
func (e *cmdEnv) jobIDsCmd(cmd *cobra.Command, one func(ctx context.Context, id int64) (proto.Message, *carillonv1.Job, error),
	many func(ctx context.Context, ids []int64) ([]*carillonv1.Job, error)) *cobra.Command {
	cmd.Args = func(c *cobra.Command, args []string) error {
		if len(args) == 0 {
			return usagef("%s: want one or more job ids (%s --help)", c.CommandPath(), c.CommandPath())
		}
		return nil
	}
	return e.leaf(cmd, func(ctx context.Context, args []string) error {
		var ids []int64
		for _, a := range args {
			id, err := parseID("job", a)
			if err != nil {
				return err
			}
			ids = append(ids, id)
		}
		res := &carillonv1.ListJobsResponse{}
		if len(ids) == 1 {
			reply, j, err := one(ctx, ids[0])
			if err != nil {
				return err
			}
			if e.json {
				return e.printJSON(reply)
			}
			res.Jobs = []*carillonv1.Job{j}
		} else {
			jobs, err := many(ctx, ids)
			if err != nil {
				return err
			}
			res.Jobs = jobs
		}
		rows := make([][]string, 0, len(res.Jobs))
		for _, j := range res.Jobs {
			rows = append(rows, jobRow(j))
		}
		return e.print(res, jobHeader, rows)
	})
}

func jobDeleteCmd(e *cmdEnv) *cobra.Command {
	cmd := &cobra.Command{Use: "delete ID", Short: "Delete a job that no other job lists as a child"}
	return e.jobIDCmd(cmd, func(ctx context.Context, id int64) error {
		res, err := e.clients().Jobs.DeleteJob(ctx, &carillonv1.DeleteJobRequest{Id: id})
		if err != nil {
			return err
		}
		return e.printDone(res, "deleted job %d", id)
	})
}

func jobTriggerCmd(e *cmdEnv) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "trigger ID",
		Short: "Run a job once, now or --at a later time; says which runs it made (--ids: their ids only)",
		Example: "  carillon job trigger 2 --param fail\n  carillon job trigger 2 --address http://10.0.0.5:9999\n  RUN=$(carillon job trigger 2 --ids)\n" +
			"  carillon job trigger 2 --at 2026-12-24T18:00:00+01:00\n  carillon job trigger 2 --at 30m",
	}
	param := cmd.Flags().String("param", "", "param for this run instead of the job's")
	at := cmd.Flags().String("at", "", "run at this time instead of now: RFC 3339 (2026-12-24T18:00:00Z) or a duration from now (30m, 2h); the run waits PENDING until then (carillon run kill ID cancels it)")
	ids := cmd.Flags().Bool("ids", false, "print only the runs' ids, one a line (for scripts)")
	addrs := cmd.Flags().StringArray("address", nil, "executor URL to route among instead of the group's (repeatable)")
	return e.jobIDCmd(cmd, func(ctx context.Context, id int64) error {
		req := &carillonv1.TriggerJobRequest{JobId: id, Addresses: *addrs}
		if cmd.Flags().Changed("param") {
			req.Param = param
		}
		if *at != "" {
			t, err := parseAt(*at, time.Now())
			if err != nil {
				return err
			}
			req.RunAt = timestamppb.New(t)
		}
		res, err := e.clients().Jobs.TriggerJob(ctx, req)
		if err != nil {
			return err
		}
		if e.json {
			return e.printJSON(res)
		}
		var runs []string
		for _, r := range res.RunIds {
			runs = append(runs, fmtID(r))
		}
		if *ids {
			for _, r := range runs {
				fmt.Fprintln(e.io.out, r)
			}
			return nil
		}
		switch len(runs) {
		case 0:
			_, err = fmt.Fprintf(e.io.out, "triggered job %d: no run was made\n", id)
		case 1:
			if req.RunAt != nil {
				_, err = fmt.Fprintf(e.io.out, "job %d runs at %s: run %s, pending until then (carillon run get %s; carillon run kill %s cancels it)\n",
					id, req.RunAt.AsTime().Local().Format(time.RFC3339), runs[0], runs[0], runs[0])
				break
			}
			_, err = fmt.Fprintf(e.io.out, "triggered job %d: run %s (carillon run get %s; carillon run log %s --follow)\n", id, runs[0], runs[0], runs[0])
		default:
			_, err = fmt.Fprintf(e.io.out, "triggered job %d: runs %s, one per executor (carillon run get ID)\n", id, strings.Join(runs, ", "))
		}
		return err
	})
}

func jobBackfillCmd(e *cmdEnv) *cobra.Command {
	return backfillCmd(e, "job", "runs", func(ctx context.Context, id int64, from, to time.Time, dry bool) ([]int64, []*timestamppb.Timestamp, proto.Message, error) {
		res, err := e.clients().Jobs.BackfillJob(ctx, &carillonv1.BackfillJobRequest{JobId: id, From: timestamppb.New(from), To: timestamppb.New(to), DryRun: dry})
		if err != nil {
			return nil, nil, nil, err
		}
		return res.RunIds, res.Instants, res, nil
	})
}

// backfillFunc calls a backfill RPC and returns what it made (run or
// workflow run ids), the instants, and the response.
type backfillFunc func(ctx context.Context, id int64, from, to time.Time, dry bool) ([]int64, []*timestamppb.Timestamp, proto.Message, error)

// backfillCmd is "carillon job backfill" or "carillon workflow backfill"
// (what): it prints each instant with what call made for it.
func backfillCmd(e *cmdEnv, what, made string, call backfillFunc) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "backfill ID --from T --to T",
		Short: "Run a " + what + " once for every instant its schedule has in [--from, --to), oldest first (--dry-run: list them)",
		Long: `Run a ` + what + ` once for every instant of its schedule (cron, or fixed rate from --from on)
in [--from, --to), each with its instant as its scheduled time (trigger type BACKFILL), at most
1000 a call. SERIAL_EXECUTION runs them one at a time, in order; a job's and its group's max
concurrency apply. --from and --to are RFC 3339 times, or durations before now (24h: a day ago).`,
		Example: "  carillon " + what + " backfill 2 --from 2026-11-01T00:00:00Z --to 2026-11-08T00:00:00Z --dry-run\n" +
			"  carillon " + what + " backfill 2 --from 24h --to 0s",
	}
	from := cmd.Flags().String("from", "", "the first instant's earliest time, included: RFC 3339 or a duration before now")
	to := cmd.Flags().String("to", "", "the end of the range, excluded: RFC 3339 or a duration before now")
	dry := cmd.Flags().Bool("dry-run", false, "list the instants only; make no run")
	_ = cmd.MarkFlagRequired("from")
	_ = cmd.MarkFlagRequired("to")
	return e.idCmd(cmd, what, func(ctx context.Context, id int64) error {
		now := time.Now()
		f, err := parseBefore("from", *from, now)
		if err != nil {
			return err
		}
		t, err := parseBefore("to", *to, now)
		if err != nil {
			return err
		}
		ids, instants, res, err := call(ctx, id, f, t, *dry)
		if err != nil {
			return err
		}
		if e.json {
			return e.printJSON(res)
		}
		for i, at := range instants {
			run := ""
			if i < len(ids) {
				run = "  " + fmtID(ids[i])
			}
			fmt.Fprintf(e.io.out, "%s%s\n", at.AsTime().UTC().Format(time.RFC3339), run)
		}
		verb := "would run"
		if !*dry {
			verb = made
		}
		_, err = fmt.Fprintf(e.io.out, "%s %d %s %d instants\n", what, id, verb, len(instants))
		return err
	})
}

// parseBefore reads backfill's --from and --to: an RFC 3339 time, or a
// duration before now.
func parseBefore(name, s string, now time.Time) (time.Time, error) {
	if t, err := time.Parse(time.RFC3339, s); err == nil {
		return t, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil || d < 0 {
		return time.Time{}, usagef("--%s: want an RFC 3339 time (2026-11-01T00:00:00Z) or a duration before now (24h), got %q", name, s)
	}
	return now.Add(-d), nil
}

// parseAt reads trigger's --at: an RFC 3339 time, or a duration after now.
func parseAt(s string, now time.Time) (time.Time, error) {
	if t, err := time.Parse(time.RFC3339, s); err == nil {
		return t, nil
	}
	if d, err := time.ParseDuration(s); err == nil && d > 0 {
		return now.Add(d), nil
	}
	return time.Time{}, usagef("--at %q: want an RFC 3339 time (2026-12-24T18:00:00Z) or a positive duration from now (30m, 2h)", s)
}

func jobPreviewCmd(e *cmdEnv) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "preview [ID] [--cron EXPR | --every N | --delay N] [--tz ZONE]",
		Short: "Print the next fire times of a job, or of a schedule",
		Long: `Print the next fire times of job ID's schedule, or of the schedule the flags
give (the API's PreviewSchedule takes a schedule; with a job id, the command
reads the job's). Times are printed in the zone of --tz, else in the job's
zone, else in UTC.`,
		Example: "  carillon job preview 1\n  carillon job preview --cron '0 15 10 ? * 6#3' --tz Europe/Berlin --count 3",
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) > 1 {
				return usagef("job preview: want at most one job id")
			}
			return nil
		},
	}
	f := &jobFlags{fs: cmd.Flags()}
	scheduleFlags(cmd.Flags(), f)
	most := ruleMax(&carillonv1.PreviewScheduleRequest{}, "count")
	count := cmd.Flags().Int("count", 5, fmt.Sprintf("how many fire times (at most %d)", most))
	from := cmd.Flags().String("from", "", "RFC 3339 time to start from (default: now)")
	cals := cmd.Flags().String("calendar", "", "calendar ids, comma-separated, whose excluded instants are skipped (default: the job's)")
	return e.leaf(cmd, func(ctx context.Context, args []string) error {
		sched, err := f.schedule()
		if err != nil {
			return err
		}
		calendarIDs, err := parseIDList("calendar", *cals)
		if err != nil {
			return err
		}
		if *count < 1 || *count > most {
			return usagef("--count: want 1 to %d, not %d", most, *count)
		}
		req := &carillonv1.PreviewScheduleRequest{Schedule: sched, Count: int32(*count)} //nolint:gosec // range checked above
		switch {
		case len(args) == 1 && sched.Type != carillonv1.ScheduleType_SCHEDULE_TYPE_UNSPECIFIED:
			return usagef("job preview: give a job id or a schedule, not both")
		case len(args) == 1:
			id, err := parseID("job", args[0])
			if err != nil {
				return err
			}
			res, err := e.clients().Jobs.GetJob(ctx, &carillonv1.GetJobRequest{Id: id})
			if err != nil {
				return err
			}
			req.Schedule = res.Job.Schedule
			if !cmd.Flags().Changed("calendar") {
				calendarIDs = res.Job.CalendarIds
			}
		case sched.Type == carillonv1.ScheduleType_SCHEDULE_TYPE_UNSPECIFIED:
			return usagef("job preview: give a job id or a schedule (--cron, --every, --delay)")
		}
		zone := cmp.Or(*f.tz, req.Schedule.TimeZone, "UTC")
		loc, err := time.LoadLocation(zone)
		if err != nil {
			return usagef("--tz: %v", err)
		}
		if *from != "" {
			t, err := time.Parse(time.RFC3339, *from)
			if err != nil {
				return usagef("--from: %v", err)
			}
			req.From = timestamppb.New(t)
		}
		req.CalendarIds = calendarIDs
		res, err := e.clients().Jobs.PreviewSchedule(ctx, req)
		if err != nil {
			return err
		}
		if len(res.FireTimes) == 0 && res.CalendarNote != "" && !e.json {
			_, err = fmt.Fprintln(e.io.out, "no fire: "+res.CalendarNote)
			return err
		}
		if len(res.FireTimes) == 0 && !e.json {
			after := "now"
			if req.From != nil {
				after = req.From.AsTime().In(loc).Format(time.RFC3339)
			}
			switch req.Schedule.Type {
			case carillonv1.ScheduleType_SCHEDULE_TYPE_NONE:
				_, err = fmt.Fprintln(e.io.out, "no schedule: it never fires, it runs only when triggered")
			case carillonv1.ScheduleType_SCHEDULE_TYPE_CRON:
				_, err = fmt.Fprintf(e.io.out, "never fires after %s: the cron %q names no instant that comes (a date that does not exist, or a year gone by)\n",
					after, req.Schedule.Cron)
			default:
				_, err = fmt.Fprintf(e.io.out, "never fires after %s\n", after)
			}
			return err
		}
		var rows [][]string
		for _, t := range res.FireTimes {
			rows = append(rows, []string{t.AsTime().In(loc).Format(time.RFC3339)})
		}
		return e.print(res, []string{"FIRE TIME (" + zone + ")"}, rows)
	})
}

// seconds is a flag of whole seconds, 0 to math.MaxInt32: a Go duration
// ("30s", "5m", "1h30m") or, as before, a number of seconds ("30").
type seconds int

// Set implements pflag.Value.
func (s *seconds) Set(v string) error {
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		d, derr := time.ParseDuration(v)
		if derr != nil {
			return fmt.Errorf("want a duration such as 30s, 5m or 1h, or a number of seconds, not %q", v)
		}
		if d%time.Second != 0 {
			return fmt.Errorf("want whole seconds, not %s", d)
		}
		n = int64(d / time.Second)
	}
	if n < 0 || n > math.MaxInt32 {
		return fmt.Errorf("%s is out of range (0 to %d seconds)", v, math.MaxInt32)
	}
	*s = seconds(n)
	return nil
}

// String implements pflag.Value: a duration, or "0" (no default shown in
// the help).
func (s *seconds) String() string {
	if *s == 0 {
		return "0"
	}
	return (time.Duration(*s) * time.Second).String()
}

// Type implements pflag.Value.
func (s *seconds) Type() string { return "duration" }
