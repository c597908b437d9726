package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"go.yaml.in/yaml/v3"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/timestamppb"

	carillonv1 "github.com/carillonhq/carillon/proto/carillon/v1"
)

func workflowCmd(e *cmdEnv) *cobra.Command {
	return noun("workflow", "Workflows: jobs in a DAG, each node run once its dependencies succeeded",
		workflowListCmd(e), workflowGetCmd(e), workflowCreateCmd(e), workflowUpdateCmd(e), workflowStartCmd(e),
		workflowStopCmd(e), workflowDeleteCmd(e), workflowTriggerCmd(e), workflowBackfillCmd(e), workflowRunsCmd(e),
		noun("run", "One workflow run", workflowRunGetCmd(e)), workflowRetryCmd(e), workflowCancelCmd(e))
}

// workflowFileHelp says what a workflow file holds.
const workflowFileHelp = `The file is YAML (or JSON): a Workflow message in protobuf's JSON mapping,
field names as in the .proto or in lowerCamelCase, enums by name:

  group_id: 1
  name: etl
  schedule: {type: SCHEDULE_TYPE_CRON, cron: "0 0 2 * * ?", time_zone: Europe/Berlin}
  nodes:
    - {key: extract, job_id: 1}
    - {key: transform_a, job_id: 2, depends_on: [extract]}
    - {key: transform_b, job_id: 3, depends_on: [extract]}
    - {key: load, job_id: 4, depends_on: [transform_a, transform_b], param: "--full"}`

// readWorkflowFile reads the workflow of a YAML or JSON file.
func (e *cmdEnv) readWorkflowFile(name string) (*carillonv1.Workflow, error) {
	w := &carillonv1.Workflow{}
	return w, e.readMessageFile(name, "workflow", w)
}

// readMessageFile reads m, a what ("workflow", "calendar"), from a YAML or
// JSON file in protobuf's JSON mapping.
func (e *cmdEnv) readMessageFile(name, what string, m proto.Message) error {
	if name == "" {
		return usagef("give the %s's file: -f FILE.yaml", what)
	}
	data, err := os.ReadFile(e.proc.path(name))
	if err != nil {
		return usagef("-f: %v", err)
	}
	var doc any
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return usagef("%s: not YAML: %v", name, err)
	}
	js, err := json.Marshal(doc)
	if err != nil {
		return usagef("%s: %v", name, err)
	}
	if err := protojson.Unmarshal(js, m); err != nil {
		return usagef("%s: not a %s: %v", name, what, err)
	}
	return nil
}

var workflowHeader = []string{"ID", "GROUP", "NAME", "NODES", "SCHEDULE", "ENABLED", "NEXT FIRE"}

func workflowRow(w *carillonv1.Workflow) []string {
	return []string{fmtID(w.Id), fmtID(w.GroupId), w.Name, fmt.Sprint(len(w.Nodes)), scheduleText(w.Schedule),
		fmt.Sprint(w.Enabled), fmtTime(w.NextFireAt)}
}

// nodeText is a node as "key (job N) <- dependencies".
func nodeText(key string, job int64, deps []string) string {
	s := fmt.Sprintf("%s (job %d)", key, job)
	if len(deps) > 0 {
		s += " <- " + strings.Join(deps, ", ")
	}
	return s
}

func workflowFields(w *carillonv1.Workflow) [][2]string {
	var nodes []string
	for _, n := range w.Nodes {
		s := nodeText(n.Key, n.JobId, n.DependsOn)
		if n.Param != nil {
			s += fmt.Sprintf(" param %q", n.GetParam())
		}
		nodes = append(nodes, s)
	}
	return [][2]string{
		{"ID", fmtID(w.Id)}, {"Group", fmtID(w.GroupId)}, {"Name", w.Name}, {"Description", orDash(w.Description)},
		{"Schedule", scheduleText(w.Schedule)}, {"Block", enumName(w.BlockStrategy, "BLOCK_STRATEGY_")},
		{"Misfire", enumName(w.MisfireStrategy, "MISFIRE_STRATEGY_")}, {"Nodes", strings.Join(nodes, "\n")},
		{"Enabled", fmt.Sprint(w.Enabled)}, {"Last fire", fmtTime(w.LastFireAt)}, {"Next fire", fmtTime(w.NextFireAt)},
		{"Created", fmtTime(w.CreatedAt)}, {"Updated", fmtTime(w.UpdatedAt)},
	}
}

var workflowRunHeader = []string{"ID", "WORKFLOW", "STATUS", "TRIGGER", "SCHEDULED", "FINISHED", "MESSAGE"}

func workflowRunRow(wr *carillonv1.WorkflowRun) []string {
	return []string{fmtID(wr.Id), fmtID(wr.WorkflowId), enumName(wr.Status, "WORKFLOW_RUN_STATUS_"),
		enumName(wr.TriggerType, "TRIGGER_TYPE_"), fmtTime(wr.ScheduledAt), fmtTime(wr.FinishedAt), orDash(wr.Message)}
}

func workflowRunFields(wr *carillonv1.WorkflowRun) [][2]string {
	var nodes []string
	for _, n := range wr.Nodes {
		s := fmt.Sprintf("%s: %s", nodeText(n.Key, n.JobId, n.DependsOn), enumName(n.Status, "RUN_STATUS_"))
		if n.RunId != 0 {
			s += fmt.Sprintf(", run %d", n.RunId)
		}
		if n.Attempt > 0 {
			s += fmt.Sprintf(", attempt %d", n.Attempt)
		}
		if n.Message != "" {
			s += " (" + n.Message + ")"
		}
		nodes = append(nodes, s)
	}
	param := "-"
	if wr.Param != nil {
		param = wr.GetParam()
	}
	return [][2]string{
		{"ID", fmtID(wr.Id)}, {"Workflow", fmtID(wr.WorkflowId)}, {"Status", enumName(wr.Status, "WORKFLOW_RUN_STATUS_")},
		{"Message", orDash(wr.Message)}, {"Trigger", enumName(wr.TriggerType, "TRIGGER_TYPE_")}, {"Param", param},
		{"Scheduled", fmtTime(wr.ScheduledAt)}, {"Started", fmtTime(wr.StartedAt)}, {"Finished", fmtTime(wr.FinishedAt)},
		{"Attempt", fmt.Sprint(wr.Attempt)}, {"Nodes", strings.Join(nodes, "\n")},
	}
}

// idCmd makes cmd a client command on one id of what.
func (e *cmdEnv) idCmd(cmd *cobra.Command, what string, f func(ctx context.Context, id int64) error) *cobra.Command {
	cmd.Args = exactArgs(1, "a "+what+" id")
	return e.leaf(cmd, func(ctx context.Context, args []string) error {
		id, err := parseID(what, args[0])
		if err != nil {
			return err
		}
		return f(ctx, id)
	})
}

func workflowListCmd(e *cmdEnv) *cobra.Command {
	cmd := &cobra.Command{Use: "list", Short: "List workflows", Args: exactArgs(0, "no arguments")}
	group := cmd.Flags().Int64("group", 0, "only workflows of this group")
	limit := cmd.Flags().Int("limit", 100, "at most this many workflows")
	return e.leaf(cmd, func(ctx context.Context, _ []string) error {
		req := &carillonv1.ListWorkflowsRequest{GroupId: *group}
		all := &carillonv1.ListWorkflowsResponse{}
		for len(all.Workflows) < *limit {
			req.PageSize = int32(min(*limit-len(all.Workflows), 500)) //nolint:gosec // bounded by min
			res, err := e.clients().Workflows.ListWorkflows(ctx, req)
			if err != nil {
				return err
			}
			all.Workflows = append(all.Workflows, res.Workflows...)
			if req.PageToken = res.NextPageToken; req.PageToken == "" {
				break
			}
		}
		var rows [][]string
		for _, w := range all.Workflows {
			rows = append(rows, workflowRow(w))
		}
		return e.print(all, workflowHeader, rows)
	})
}

func workflowGetCmd(e *cmdEnv) *cobra.Command {
	return e.idCmd(&cobra.Command{Use: "get ID", Short: "Show a workflow and its nodes"}, "workflow", func(ctx context.Context, id int64) error {
		res, err := e.clients().Workflows.GetWorkflow(ctx, &carillonv1.GetWorkflowRequest{Id: id})
		if err != nil {
			return err
		}
		return e.printFields(res, workflowFields(res.Workflow))
	})
}

func workflowCreateCmd(e *cmdEnv) *cobra.Command {
	cmd := &cobra.Command{
		Use:     "create -f FILE",
		Short:   "Create a workflow from a YAML file",
		Long:    "Create a workflow from a YAML file. --start starts its schedule at once.\n\n" + workflowFileHelp,
		Example: "  carillon workflow create -f etl.yaml --start",
		Args:    exactArgs(0, "flags only: carillon workflow create -f FILE"),
	}
	file := cmd.Flags().StringP("file", "f", "", "the workflow's YAML (or JSON) file")
	start := cmd.Flags().Bool("start", false, "start the schedule at once")
	_ = cobra.MarkFlagFilename(cmd.Flags(), "file", "yaml", "yml", "json")
	return e.leaf(cmd, func(ctx context.Context, _ []string) error {
		w, err := e.readWorkflowFile(*file)
		if err != nil {
			return err
		}
		w.Id, w.Enabled = 0, *start
		res, err := e.clients().Workflows.CreateWorkflow(ctx, &carillonv1.CreateWorkflowRequest{Workflow: w})
		if err != nil {
			return err
		}
		return e.printFields(res, workflowFields(res.Workflow))
	})
}

func workflowUpdateCmd(e *cmdEnv) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "update [ID] -f FILE",
		Short: "Replace a workflow with a YAML file's",
		Long: "Replace a workflow's definition (its nodes, schedule, strategies, name) with the file's;\n" +
			"the ID is the argument's or the file's id. Workflow runs already made keep their nodes.\n\n" + workflowFileHelp,
		Example: "  carillon workflow update 1 -f etl.yaml",
		Args:    cobra.MaximumNArgs(1),
	}
	file := cmd.Flags().StringP("file", "f", "", "the workflow's YAML (or JSON) file")
	_ = cobra.MarkFlagFilename(cmd.Flags(), "file", "yaml", "yml", "json")
	return e.leaf(cmd, func(ctx context.Context, args []string) error {
		w, err := e.readWorkflowFile(*file)
		if err != nil {
			return err
		}
		if len(args) == 1 {
			if w.Id, err = parseID("workflow", args[0]); err != nil {
				return err
			}
		}
		if w.Id == 0 {
			return usagef("workflow update: give the workflow's id, as an argument or as id in the file")
		}
		res, err := e.clients().Workflows.UpdateWorkflow(ctx, &carillonv1.UpdateWorkflowRequest{Workflow: w})
		if err != nil {
			return err
		}
		return e.printFields(res, workflowFields(res.Workflow))
	})
}

func workflowStartCmd(e *cmdEnv) *cobra.Command {
	return e.idCmd(&cobra.Command{Use: "start ID", Short: "Start a workflow's schedule"}, "workflow", func(ctx context.Context, id int64) error {
		res, err := e.clients().Workflows.StartWorkflow(ctx, &carillonv1.StartWorkflowRequest{Id: id})
		if err != nil {
			return err
		}
		return e.printFields(res, workflowFields(res.Workflow))
	})
}

func workflowStopCmd(e *cmdEnv) *cobra.Command {
	return e.idCmd(&cobra.Command{Use: "stop ID", Short: "Stop a workflow's schedule (workflow runs made go on)"}, "workflow", func(ctx context.Context, id int64) error {
		res, err := e.clients().Workflows.StopWorkflow(ctx, &carillonv1.StopWorkflowRequest{Id: id})
		if err != nil {
			return err
		}
		return e.printFields(res, workflowFields(res.Workflow))
	})
}

func workflowDeleteCmd(e *cmdEnv) *cobra.Command {
	return e.idCmd(&cobra.Command{Use: "delete ID", Short: "Delete a workflow and its workflow runs (their node runs are kept)"}, "workflow",
		func(ctx context.Context, id int64) error {
			res, err := e.clients().Workflows.DeleteWorkflow(ctx, &carillonv1.DeleteWorkflowRequest{Id: id})
			if err != nil {
				return err
			}
			return e.printDone(res, "deleted workflow %d", id)
		})
}

func workflowTriggerCmd(e *cmdEnv) *cobra.Command {
	cmd := &cobra.Command{
		Use:     "trigger ID",
		Short:   "Run a workflow now; prints the workflow run's id",
		Example: "  carillon workflow trigger 1\n  carillon workflow trigger 1 --param 2026-11-26",
	}
	param := cmd.Flags().String("param", "", "every node's param for this workflow run, instead of the nodes' and jobs'")
	return e.idCmd(cmd, "workflow", func(ctx context.Context, id int64) error {
		req := &carillonv1.TriggerWorkflowRequest{WorkflowId: id}
		if cmd.Flags().Changed("param") {
			req.Param = param
		}
		res, err := e.clients().Workflows.TriggerWorkflow(ctx, req)
		if err != nil {
			return err
		}
		return e.printDone(res, "%d", res.WorkflowRunId)
	})
}

func workflowBackfillCmd(e *cmdEnv) *cobra.Command {
	return backfillCmd(e, "workflow", "made workflow runs for", func(ctx context.Context, id int64, from, to time.Time, dry bool) ([]int64, []*timestamppb.Timestamp, proto.Message, error) {
		res, err := e.clients().Workflows.BackfillWorkflow(ctx, &carillonv1.BackfillWorkflowRequest{WorkflowId: id, From: timestamppb.New(from), To: timestamppb.New(to), DryRun: dry})
		if err != nil {
			return nil, nil, nil, err
		}
		return res.WorkflowRunIds, res.Instants, res, nil
	})
}

func workflowRunsCmd(e *cmdEnv) *cobra.Command {
	cmd := &cobra.Command{Use: "runs [WORKFLOW_ID]", Short: "List workflow runs, newest first", Args: cobra.MaximumNArgs(1)}
	status := cmd.Flags().String("status", "", "only workflow runs of this status: "+
		enumValues(carillonv1.WorkflowRunStatus(0).Descriptor(), "WORKFLOW_RUN_STATUS_"))
	limit := cmd.Flags().Int("limit", 50, "at most this many workflow runs")
	return e.leaf(cmd, func(ctx context.Context, args []string) error {
		req := &carillonv1.ListWorkflowRunsRequest{}
		if len(args) == 1 {
			id, err := parseID("workflow", args[0])
			if err != nil {
				return err
			}
			req.WorkflowId = id
		}
		if *status != "" {
			n, err := parseEnum("status", *status, carillonv1.WorkflowRunStatus(0).Descriptor(), "WORKFLOW_RUN_STATUS_")
			if err != nil {
				return err
			}
			req.Status = carillonv1.WorkflowRunStatus(n)
		}
		all := &carillonv1.ListWorkflowRunsResponse{}
		for len(all.WorkflowRuns) < *limit {
			req.PageSize = int32(min(*limit-len(all.WorkflowRuns), 500)) //nolint:gosec // bounded by min
			res, err := e.clients().Workflows.ListWorkflowRuns(ctx, req)
			if err != nil {
				return err
			}
			all.WorkflowRuns = append(all.WorkflowRuns, res.WorkflowRuns...)
			if req.PageToken = res.NextPageToken; req.PageToken == "" {
				break
			}
		}
		var rows [][]string
		for _, wr := range all.WorkflowRuns {
			rows = append(rows, workflowRunRow(wr))
		}
		return e.print(all, workflowRunHeader, rows)
	})
}

func workflowRunGetCmd(e *cmdEnv) *cobra.Command {
	return e.idCmd(&cobra.Command{Use: "get ID", Short: "Show a workflow run and the state of each node"}, "workflow run",
		func(ctx context.Context, id int64) error {
			res, err := e.clients().Workflows.GetWorkflowRun(ctx, &carillonv1.GetWorkflowRunRequest{WorkflowRunId: id})
			if err != nil {
				return err
			}
			return e.printFields(res, workflowRunFields(res.WorkflowRun))
		})
}

func workflowRetryCmd(e *cmdEnv) *cobra.Command {
	return e.idCmd(&cobra.Command{Use: "retry RUN_ID", Short: "Run a failed or cancelled workflow run's failed nodes again, then what depends on them"},
		"workflow run", func(ctx context.Context, id int64) error {
			res, err := e.clients().Workflows.RetryWorkflowRun(ctx, &carillonv1.RetryWorkflowRunRequest{WorkflowRunId: id})
			if err != nil {
				return err
			}
			return e.printFields(res, workflowRunFields(res.WorkflowRun))
		})
}

func workflowCancelCmd(e *cmdEnv) *cobra.Command {
	return e.idCmd(&cobra.Command{Use: "cancel RUN_ID", Short: "Cancel a workflow run: kill its running nodes, skip the rest"},
		"workflow run", func(ctx context.Context, id int64) error {
			res, err := e.clients().Workflows.CancelWorkflowRun(ctx, &carillonv1.CancelWorkflowRunRequest{WorkflowRunId: id})
			if err != nil {
				return err
			}
			return e.printFields(res, workflowRunFields(res.WorkflowRun))
		})
}
