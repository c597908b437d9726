package main

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	carillonv1 "github.com/carillonhq/carillon/proto/carillon/v1"
)

func cmdRun(ctx context.Context, e *cmdEnv, args []string) error {
	return sub(ctx, e, "run", args, map[string]func(context.Context, *cmdEnv, []string) error{
		"list": runList, "get": runGet, "log": runLog, "kill": runKill,
	})
}

var runHeader = []string{"ID", "JOB", "STATUS", "TRIGGER", "SCHEDULED", "EXECUTOR", "MESSAGE"}

func runRow(r *carillonv1.Run) []string {
	msg := r.Message
	if i := strings.IndexByte(msg, '\n'); i >= 0 {
		msg = msg[:i] + " …"
	}
	if len(msg) > 60 {
		msg = msg[:57] + "..."
	}
	return []string{fmtID(r.Id), fmtID(r.JobId), enumName(r.Status, "RUN_STATUS_"), enumName(r.TriggerType, "TRIGGER_TYPE_"),
		fmtTime(r.ScheduledAt), orDash(r.ExecutorAddress), orDash(msg)}
}

func runList(ctx context.Context, e *cmdEnv, args []string) error {
	fs := e.flags("run list")
	job := fs.Int64("job", 0, "only runs of this job")
	group := fs.Int64("group", 0, "only runs of this group")
	status := fs.String("status", "", "only runs with this status: running, succeeded, failed, ...")
	limit := fs.Int("limit", 20, "at most this many runs, newest first")
	if _, err := e.parse(fs, args, 0, "no arguments"); err != nil {
		return err
	}
	req := &carillonv1.ListRunsRequest{JobId: *job, GroupId: *group, PageSize: int32(min(max(*limit, 1), 500))}
	if *status != "" {
		n, err := parseEnum("status", *status, carillonv1.RunStatus(0).Descriptor(), "RUN_STATUS_")
		if err != nil {
			return err
		}
		req.Status = carillonv1.RunStatus(n)
	}
	res, err := e.clients().run.ListRuns(ctx, req)
	if err != nil {
		return err
	}
	var rows [][]string
	for _, r := range res.Runs {
		rows = append(rows, runRow(r))
	}
	return e.print(res, runHeader, rows)
}

func runID(e *cmdEnv, name string, args []string) (int64, error) {
	pos, err := e.parse(e.flags(name), args, 1, "a run id")
	if err != nil {
		return 0, err
	}
	return parseID("run", pos[0])
}

func runGet(ctx context.Context, e *cmdEnv, args []string) error {
	id, err := runID(e, "run get", args)
	if err != nil {
		return err
	}
	res, err := e.clients().run.GetRun(ctx, &carillonv1.GetRunRequest{Id: id})
	if err != nil {
		return err
	}
	r := res.Run
	return e.printFields(res, [][2]string{
		{"ID", fmtID(r.Id)}, {"Job", fmtID(r.JobId)}, {"Group", fmtID(r.GroupId)}, {"Status", enumName(r.Status, "RUN_STATUS_")},
		{"Message", orDash(r.Message)}, {"Trigger", enumName(r.TriggerType, "TRIGGER_TYPE_")}, {"Attempt", fmt.Sprint(r.Attempt)},
		{"Shard", fmt.Sprintf("%d of %d", r.ShardIndex+1, max(r.ShardTotal, 1))}, {"Executor", orDash(r.ExecutorAddress)},
		{"Handler", orDash(r.Handler)}, {"Param", orDash(r.Param)}, {"Scheduled", fmtTime(r.ScheduledAt)},
		{"Triggered", fmtTime(r.TriggeredAt)}, {"Finished", fmtTime(r.FinishedAt)}, {"Routing", orDash(r.TriggerMessage)},
	})
}

// runLog prints a run's log; with --follow it polls until the run ends.
func runLog(ctx context.Context, e *cmdEnv, args []string) error {
	fs := e.flags("run log")
	follow := fs.Bool("follow", false, "keep printing new lines until the run has finished")
	from := fs.Int("from-line", 1, "first line to print (1-based)")
	every := fs.Duration("interval", time.Second, "with --follow: how often to ask for new lines")
	pos, err := e.parse(fs, args, 1, "a run id")
	if err != nil {
		return err
	}
	id, err := parseID("run", pos[0])
	if err != nil {
		return err
	}
	c := e.clients()
	line := int32(max(*from, 1)) //nolint:gosec // bounded: a line number the server caps
	for {
		page, err := c.run.ReadRunLog(ctx, &carillonv1.ReadRunLogRequest{RunId: id, FromLine: line})
		if err != nil {
			return err
		}
		if e.json {
			if err := e.printJSON(page); err != nil {
				return err
			}
		} else if page.Content != "" {
			_, _ = io.WriteString(e.io.out, page.Content)
			if !strings.HasSuffix(page.Content, "\n") {
				_, _ = io.WriteString(e.io.out, "\n")
			}
		}
		if page.ToLine >= line {
			line = page.ToLine + 1
		}
		if !*follow || page.End {
			return nil
		}
		if page.ToLine >= page.FromLine && page.FromLine > 0 {
			continue // a full page: there may be more at once
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(*every):
		}
	}
}

func runKill(ctx context.Context, e *cmdEnv, args []string) error {
	id, err := runID(e, "run kill", args)
	if err != nil {
		return err
	}
	res, err := e.clients().run.KillRun(ctx, &carillonv1.KillRunRequest{RunId: id})
	if err != nil {
		return err
	}
	if e.json {
		return e.printJSON(res)
	}
	fmt.Fprintf(e.io.out, "killed run %d\n", id)
	return nil
}
