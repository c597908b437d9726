package main

import (
	"context"
	"fmt"
	"io"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"google.golang.org/protobuf/types/known/timestamppb"

	carillonv1 "github.com/carillonhq/carillon/proto/carillon/v1"
)

func runCmd(e *cmdEnv) *cobra.Command {
	return noun("run", "Runs: one execution of a job each, with its status, message and log",
		runListCmd(e), runGetCmd(e), runLogCmd(e), runKillCmd(e), runDeleteCmd(e))
}

var runHeader = []string{"ID", "JOB", "STATUS", "TRIGGER", "SCHEDULED", "EXECUTOR", "MESSAGE"}

// runRow is a run in a table; its message is whole, its lines joined.
func runRow(r *carillonv1.Run) []string {
	msg := strings.Join(strings.Fields(strings.ReplaceAll(r.Message, "\n", " ⏎ ")), " ")
	return []string{fmtID(r.Id), fmtID(r.JobId), enumName(r.Status, "RUN_STATUS_"), enumName(r.TriggerType, "TRIGGER_TYPE_"),
		fmtTime(r.ScheduledAt), orDash(r.ExecutorAddress), orDash(msg)}
}

func runListCmd(e *cmdEnv) *cobra.Command {
	cmd := &cobra.Command{
		Use:     "list",
		Short:   "List runs, newest first",
		Example: "  carillon run list --job 1 --status failed\n  carillon run list --job 1 --limit 1 --ids     # the newest run's id, for scripts",
		Args:    exactArgs(0, "no arguments"),
	}
	fs := cmd.Flags()
	job := fs.Int64("job", 0, "only runs of this job")
	group := fs.Int64("group", 0, "only runs of this group")
	status := fs.String("status", "", "only runs with this status: "+enumValues(carillonv1.RunStatus(0).Descriptor(), "RUN_STATUS_"))
	most := ruleMax(&carillonv1.ListRunsRequest{}, "page_size")
	limit := fs.Int("limit", 20, fmt.Sprintf("at most this many runs (1 to %d)", most))
	ids := fs.Bool("ids", false, "print only the runs' ids, one a line")
	from := fs.String("from", "", "only runs triggered at or after this RFC 3339 time")
	to := fs.String("to", "", "only runs triggered before this RFC 3339 time")
	return e.leaf(cmd, func(ctx context.Context, _ []string) error {
		if *limit < 1 || *limit > most {
			return usagef("--limit: want 1 to %d, not %d", most, *limit)
		}
		req := &carillonv1.ListRunsRequest{JobId: *job, GroupId: *group, PageSize: int32(*limit)} //nolint:gosec // range checked above
		var err error
		if req.From, err = parseTime("from", *from); err != nil {
			return err
		}
		if req.To, err = parseTime("to", *to); err != nil {
			return err
		}
		if *status != "" {
			n, err := parseEnum("status", *status, carillonv1.RunStatus(0).Descriptor(), "RUN_STATUS_")
			if err != nil {
				return err
			}
			req.Status = carillonv1.RunStatus(n)
		}
		res, err := e.clients().Runs.ListRuns(ctx, req)
		if err != nil {
			return err
		}
		if *ids && !e.json {
			for _, r := range res.Runs {
				fmt.Fprintln(e.io.out, r.Id)
			}
			return nil
		}
		var rows [][]string
		for _, r := range res.Runs {
			rows = append(rows, runRow(r))
		}
		return e.print(res, runHeader, rows)
	})
}

// runIDCmd makes cmd a client command on one run id.
func (e *cmdEnv) runIDCmd(cmd *cobra.Command, f func(ctx context.Context, id int64) error) *cobra.Command {
	cmd.Args = exactArgs(1, "a run id")
	return e.leaf(cmd, func(ctx context.Context, args []string) error {
		id, err := parseID("run", args[0])
		if err != nil {
			return err
		}
		return f(ctx, id)
	})
}

// shardText is a run's shard, 0-based as in the API.
func shardText(r *carillonv1.Run) string {
	if r.ShardTotal <= 1 {
		return "-"
	}
	return fmt.Sprintf("%d of %d (0-based)", r.ShardIndex, r.ShardTotal)
}

// runFields are every field of a run.
func runFields(r *carillonv1.Run) [][2]string {
	missed := "-"
	if r.MissedCount > 0 {
		missed = fmt.Sprintf("%d instants, until %s", r.MissedCount, fmtTime(r.MissedUntil))
	}
	alarm := "-"
	if r.AlarmStatus != carillonv1.AlarmStatus_ALARM_STATUS_UNSPECIFIED {
		alarm = enumName(r.AlarmStatus, "ALARM_STATUS_")
		if r.AlarmMessage != "" {
			alarm += ": " + r.AlarmMessage
		}
	}
	return [][2]string{
		{"ID", fmtID(r.Id)}, {"Job", fmtID(r.JobId)}, {"Group", fmtID(r.GroupId)}, {"Status", enumName(r.Status, "RUN_STATUS_")},
		{"Message", orDash(r.Message)}, {"Trigger", enumName(r.TriggerType, "TRIGGER_TYPE_")}, {"Attempt", fmt.Sprint(r.Attempt)},
		{"Shard", shardText(r)}, {"Executor", orDash(r.ExecutorAddress)},
		{"Handler", orDash(r.Handler)}, {"Param", orDash(r.Param)}, {"Scheduled", fmtTime(r.ScheduledAt)}, {"Due", fmtTime(r.DueAt)},
		{"Triggered", fmtTime(r.TriggeredAt)}, {"Started", fmtTime(r.StartedAt)}, {"Finished", fmtTime(r.FinishedAt)}, {"Routing", orDash(r.TriggerMessage)},
		{"Missed", missed}, {"Settled by admin", yesNo(r.SettledByAdmin)}, {"Late result", yesNo(r.LateResult)}, {"Alarm", alarm},
		{"Inputs", contextText(r.Inputs)}, {"Outputs", contextText(r.Outputs)},
	}
}

// contextText is a run's inputs or outputs (context between workflow
// nodes): key=value pairs in key order, Go-quoted where a value is not
// plain; "-" when none.
func contextText(m map[string]string) string {
	if len(m) == 0 {
		return "-"
	}
	pairs := make([]string, 0, len(m))
	for _, k := range slices.Sorted(maps.Keys(m)) {
		v := m[k]
		if strings.ContainsAny(v, " \t\n\r\"=,") || v == "" {
			v = strconv.Quote(v)
		}
		pairs = append(pairs, k+"="+v)
	}
	return strings.Join(pairs, ", ")
}

func runGetCmd(e *cmdEnv) *cobra.Command {
	cmd := &cobra.Command{Use: "get ID", Short: "Show every field of a run, alarm status included"}
	return e.runIDCmd(cmd, func(ctx context.Context, id int64) error {
		res, err := e.clients().Runs.GetRun(ctx, &carillonv1.GetRunRequest{Id: id})
		if err != nil {
			return err
		}
		return e.printFields(res, runFields(res.Run))
	})
}

// runLogCmd prints a run's log, page after page to its end; with --follow
// it polls until the run ends.
func runLogCmd(e *cmdEnv) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "log ID",
		Short: "Print a run's whole log, fetched by the admin from its executor",
		Long: `Print a run's whole log, fetched by the admin from the executor, page by page.
--tail N prints only its last N lines; --follow keeps printing new lines until
the run has finished.`,
		Example: "  carillon run log 7\n  carillon run log 7 --tail 20 --follow",
	}
	fs := cmd.Flags()
	follow := fs.Bool("follow", false, "keep printing new lines until the run has finished")
	from := fs.Int("from-line", 1, "first line to print (1-based)")
	tail := fs.Int("tail", 0, "print only the last N lines (then, with --follow, the new ones)")
	every := fs.Duration("interval", time.Second, "with --follow: how often to ask for new lines")
	return e.runIDCmd(cmd, func(ctx context.Context, id int64) error {
		switch {
		case *tail < 0:
			return usagef("--tail: want a positive number of lines, not %d", *tail)
		case *tail > 0 && e.json:
			return usagef("--tail: not with --json, which prints the log's pages")
		case *from < 1 || *from > math.MaxInt32:
			return usagef("--from-line: want a line number from 1, not %d", *from)
		}
		c := e.clients()
		line := int32(*from) //nolint:gosec // range checked above
		var last []string    // with --tail: the last lines so far
		tailing := *tail > 0
		flush := func() {
			if tailing {
				_, _ = io.WriteString(e.io.out, strings.Join(last, ""))
				tailing, last = false, nil
			}
		}
		for {
			page, err := c.Runs.ReadRunLog(ctx, &carillonv1.ReadRunLogRequest{RunId: id, FromLine: line})
			if err != nil {
				return err
			}
			content := page.Content
			if content != "" && !strings.HasSuffix(content, "\n") {
				content += "\n"
			}
			switch {
			case e.json:
				if err := e.printJSON(page); err != nil {
					return err
				}
			case tailing:
				lines := strings.SplitAfter(content, "\n") // each with its newline, then ""
				last = append(last, lines[:len(lines)-1]...)
				last = last[max(0, len(last)-*tail):]
			default:
				_, _ = io.WriteString(e.io.out, content)
			}
			got := page.FromLine > 0 && page.ToLine >= page.FromLine
			if got {
				line = page.ToLine + 1
			}
			switch {
			case page.End:
				flush()
				return nil
			case got:
				continue // there may be more at once
			case !*follow:
				flush()
				return nil
			}
			flush() // caught up: the tail, then new lines as they come
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(*every):
			}
		}
	})
}

func runKillCmd(e *cmdEnv) *cobra.Command {
	cmd := &cobra.Command{Use: "kill ID", Short: "Kill a running run, or cancel a pending one before it starts"}
	return e.runIDCmd(cmd, func(ctx context.Context, id int64) error {
		res, err := e.clients().Runs.KillRun(ctx, &carillonv1.KillRunRequest{RunId: id})
		if err != nil {
			return err
		}
		return e.printDone(res, "killed run %d", id)
	})
}

func runDeleteCmd(e *cmdEnv) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "delete (--older-than AGE | --keep-last N) [--job ID] [--group ID]",
		Short: "Delete settled runs by age, or keeping the newest N",
		Long: `Delete settled runs (running and pending runs are kept): those triggered more
than --older-than ago, or all but the newest --keep-last of the selection, or
both; of one job or group, or of all.`,
		Example: "  carillon run delete --older-than 720h --dry-run\n  carillon run delete --older-than 720h\n  carillon run delete --job 1 --keep-last 100",
		Args:    exactArgs(0, "flags only"),
	}
	fs := cmd.Flags()
	older := fs.Duration("older-than", 0, "delete runs triggered more than this long ago, e.g. 720h")
	keep := fs.Int("keep-last", 0, "keep the newest N runs of the selection")
	job := fs.Int64("job", 0, "only runs of this job")
	group := fs.Int64("group", 0, "only runs of this group")
	dryRun := fs.Bool("dry-run", false, "delete nothing: say how many runs would be deleted")
	return e.leaf(cmd, func(ctx context.Context, _ []string) error {
		switch {
		case !fs.Changed("older-than") && !fs.Changed("keep-last"):
			return usagef("run delete: give --older-than or --keep-last (or both)")
		case *older < 0:
			return usagef("--older-than: want a positive age, not %s", *older)
		case *keep < 0 || *keep > math.MaxInt32:
			return usagef("--keep-last: want 0 or more, not %d", *keep)
		}
		req := &carillonv1.DeleteRunsRequest{JobId: *job, GroupId: *group, KeepLast: int32(*keep), DryRun: *dryRun} //nolint:gosec // range checked above
		if fs.Changed("older-than") {
			req.Before = timestamppb.New(time.Now().Add(-*older))
		}
		res, err := e.clients().Runs.DeleteRuns(ctx, req)
		if err != nil {
			return err
		}
		if *dryRun {
			return e.printDone(res, "would delete %d runs (dry run: nothing deleted)", res.Deleted)
		}
		return e.printDone(res, "deleted %d runs", res.Deleted)
	})
}
