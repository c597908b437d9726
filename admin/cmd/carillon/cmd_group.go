package main

import (
	"context"
	"fmt"
	"math"
	"strings"

	"github.com/spf13/cobra"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/fieldmaskpb"

	carillonv1 "github.com/carillonhq/carillon/proto/carillon/v1"
)

func groupCmd(e *cmdEnv) *cobra.Command {
	return noun("group", "Executor groups: the app names executors register under, and where runs go",
		groupListCmd(e), groupGetCmd(e), groupCreateCmd(e), groupUpdateCmd(e), groupDeleteCmd(e), groupTokenCmd(e),
		groupPauseCmd(e), groupResumeCmd(e))
}

func groupRow(g *carillonv1.Group) []string {
	return []string{fmtID(g.Id), g.AppName, g.Title, enumName(g.AddressMode, "ADDRESS_MODE_"), protocolName(g),
		capText(g.MaxConcurrency), orDash(strings.Join(g.Addresses, ",")), yesNo(g.Paused)}
}

var groupHeader = []string{"ID", "APP", "TITLE", "MODE", "PROTOCOL", "CAP", "EXECUTORS", "PAUSED"}

// maxConcurrencyUsage is the help of the groups' --max-concurrency.
const maxConcurrencyUsage = "at most this many runs of all the group's jobs running at once over all executors (0: no cap)"

// groupCap reads a group's --max-concurrency.
func groupCap(n int) (int32, error) {
	if n < 0 || n > math.MaxInt32 {
		return 0, usagef("--max-concurrency: %d is out of range", n)
	}
	return int32(n), nil
}

func groupListCmd(e *cmdEnv) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List the groups, and the app names executors registered under that no group has",
		Args:  exactArgs(0, "no arguments"),
	}
	return e.leaf(cmd, func(ctx context.Context, _ []string) error {
		res, err := e.clients().Groups.ListGroups(ctx, &carillonv1.ListGroupsRequest{})
		if err != nil {
			return err
		}
		var rows [][]string
		for _, g := range res.Groups {
			rows = append(rows, groupRow(g))
		}
		if err := e.print(res, groupHeader, rows); err != nil || e.json || len(res.UnclaimedAppNames) == 0 {
			return err
		}
		_, err = fmt.Fprintf(e.io.out, "\nExecutors registered under app names no group has (create a group for each to use them):\n  %s\n",
			strings.Join(res.UnclaimedAppNames, "\n  "))
		return err
	})
}

func groupFields(g *carillonv1.Group) [][2]string {
	live := make([]string, 0, len(g.LiveExecutors))
	for _, x := range g.LiveExecutors {
		live = append(live, x.Address+" (last beat "+fmtTime(x.LastBeat)+")")
	}
	return [][2]string{
		{"ID", fmtID(g.Id)}, {"App", g.AppName}, {"Title", g.Title}, {"Mode", enumName(g.AddressMode, "ADDRESS_MODE_")},
		{"Protocol", protocolName(g)},
		{"Executors", orDash(strings.Join(g.Addresses, "\n"))}, {"Live executors", orDash(strings.Join(live, "\n"))},
		{"Own token", yesNo(g.HasOwnToken)}, {"Paused", yesNo(g.Paused)}, {"Updated", fmtTime(g.UpdatedAt)},
	}
}

func groupGetCmd(e *cmdEnv) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "get ID",
		Short: "Show a group and its live executors",
		Args:  exactArgs(1, "a group id"),
	}
	return e.leaf(cmd, func(ctx context.Context, args []string) error {
		id, err := parseID("group", args[0])
		if err != nil {
			return err
		}
		res, err := e.clients().Groups.GetGroup(ctx, &carillonv1.GetGroupRequest{Id: id})
		if err != nil {
			return err
		}
		return e.printFields(res, groupFields(res.Group))
	})
}

func groupCreateCmd(e *cmdEnv) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "create APP",
		Short: "Create a group for the executors of an app name",
		Long: `Create a group. APP is the app name executors register under. An AUTO group
(the default) routes to the executors that registered in the last 90 s; a
MANUAL one (--manual) to the URLs given. --protocol xxl-job makes a group of
xxl-job executors (xxl-job-core, xxl-job-executor-go), which register through
the admin's /api/registry; --allow-scripts sends them its script jobs.`,
		Example: "  carillon group create example --title 'Example executors'\n  carillon group create legacy --manual http://10.0.0.5:9999,http://10.0.0.6:9999\n" +
			"  carillon group create xxl-job-executor-sample --protocol xxl-job",
		Args: exactArgs(1, "an app name: carillon group create APP"),
	}
	title := cmd.Flags().String("title", "", "title (default: the app name)")
	manual := cmd.Flags().String("manual", "", "MANUAL mode with these executor URLs, comma-separated (default: AUTO, the registered executors)")
	protocol := cmd.Flags().String("protocol", "carillon", "the executors' protocol: carillon (the SDK) or xxl-job (xxl-job-core, xxl-job-executor-go)")
	allowScripts := cmd.Flags().Bool("allow-scripts", false, "xxl-job groups: send script (GLUE) jobs to the executors")
	maxConcurrency := cmd.Flags().Int("max-concurrency", 0, maxConcurrencyUsage)
	return e.leaf(cmd, func(ctx context.Context, args []string) error {
		p, err := parseProtocol(*protocol)
		if err != nil {
			return err
		}
		limit, err := groupCap(*maxConcurrency)
		if err != nil {
			return err
		}
		g := &carillonv1.Group{AppName: args[0], Title: *title, ExecutorProtocol: p, AllowScripts: *allowScripts, MaxConcurrency: limit}
		if *manual != "" {
			g.AddressMode, g.Addresses = carillonv1.AddressMode_ADDRESS_MODE_MANUAL, splitList(*manual)
		}
		res, err := e.clients().Groups.CreateGroup(ctx, &carillonv1.CreateGroupRequest{Group: g})
		if err != nil {
			return err
		}
		return e.print(res, groupHeader, [][]string{groupRow(res.Group)})
	})
}

func groupUpdateCmd(e *cmdEnv) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "update ID",
		Short: "Change a group's title, app name, mode, protocol, scripts or cap; only the fields of the flags given change",
		Example: "  carillon group update 1 --title 'Batch executors'\n  carillon group update 1 --manual http://10.0.0.5:9999\n" +
			"  carillon group update 1 --auto",
		Args: exactArgs(1, "a group id"),
	}
	fs := cmd.Flags()
	title := fs.String("title", "", "the new title")
	app := fs.String("app", "", "the new app name")
	manual := fs.String("manual", "", "MANUAL mode with these executor URLs, comma-separated")
	auto := fs.Bool("auto", false, "AUTO mode: route to the executors registered under the app name")
	cmd.MarkFlagsMutuallyExclusive("manual", "auto")
	protocol := fs.String("protocol", "", "the executors' protocol: carillon or xxl-job")
	allowScripts := fs.Bool("allow-scripts", false, "xxl-job groups: send script (GLUE) jobs to the executors (--allow-scripts=false stops)")
	maxConcurrency := fs.Int("max-concurrency", 0, maxConcurrencyUsage)
	return e.leaf(cmd, func(ctx context.Context, args []string) error {
		id, err := parseID("group", args[0])
		if err != nil {
			return err
		}
		g := &carillonv1.Group{Id: id, Title: *title, AppName: *app}
		var mask []string
		if fs.Changed("title") {
			mask = append(mask, "title")
		}
		if fs.Changed("app") {
			mask = append(mask, "app_name")
		}
		switch {
		case fs.Changed("manual"):
			g.AddressMode, g.Addresses = carillonv1.AddressMode_ADDRESS_MODE_MANUAL, splitList(*manual)
			mask = append(mask, "address_mode", "addresses")
		case *auto:
			g.AddressMode = carillonv1.AddressMode_ADDRESS_MODE_AUTO
			mask = append(mask, "address_mode", "addresses")
		}
		if fs.Changed("protocol") {
			if g.ExecutorProtocol, err = parseProtocol(*protocol); err != nil {
				return err
			}
			mask = append(mask, "executor_protocol")
		}
		if fs.Changed("allow-scripts") {
			g.AllowScripts = *allowScripts
			mask = append(mask, "allow_scripts")
		}
		if fs.Changed("max-concurrency") {
			if g.MaxConcurrency, err = groupCap(*maxConcurrency); err != nil {
				return err
			}
			mask = append(mask, "max_concurrency")
		}
		if len(mask) == 0 {
			return usagef("group update: nothing to change: give --title, --app, --manual, --auto, --protocol, --allow-scripts or --max-concurrency")
		}
		res, err := e.clients().Groups.UpdateGroup(ctx, &carillonv1.UpdateGroupRequest{Group: g, UpdateMask: &fieldmaskpb.FieldMask{Paths: mask}})
		if err != nil {
			return err
		}
		return e.print(res, groupHeader, [][]string{groupRow(res.Group)})
	})
}

func groupDeleteCmd(e *cmdEnv) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "delete ID",
		Short: "Delete a group that has no jobs",
		Args:  exactArgs(1, "a group id"),
	}
	return e.leaf(cmd, func(ctx context.Context, args []string) error {
		id, err := parseID("group", args[0])
		if err != nil {
			return err
		}
		res, err := e.clients().Groups.DeleteGroup(ctx, &carillonv1.DeleteGroupRequest{Id: id})
		if err != nil {
			return err
		}
		return e.printDone(res, "deleted group %d", id)
	})
}

// groupTokenCmd gives a group an executor token of its own (printed alone,
// for scripts), or with --clear returns it to the global token.
func groupTokenCmd(e *cmdEnv) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "token ID",
		Short: "Give a group an executor token of its own, printed once (ADMIN)",
		Long: `Give a group an executor token of its own, printed alone on stdout (shown only
now): its executors must then use it instead of the global executor token.
Run it again to rotate the token; --clear returns the group to the global
token. ADMIN only.`,
		Args: exactArgs(1, "a group id"),
	}
	clear := cmd.Flags().Bool("clear", false, "return the group to the global executor token")
	return e.leaf(cmd, func(ctx context.Context, args []string) error {
		id, err := parseID("group", args[0])
		if err != nil {
			return err
		}
		if *clear {
			res, err := e.clients().Groups.ClearGroupToken(ctx, &carillonv1.ClearGroupTokenRequest{Id: id})
			if err != nil {
				return err
			}
			return e.printDone(res, "group %d uses the global executor token again", id)
		}
		res, err := e.clients().Groups.RotateGroupToken(ctx, &carillonv1.RotateGroupTokenRequest{Id: id})
		if err != nil {
			return err
		}
		return e.printDone(res, "%s", res.Token)
	})
}

// parseProtocol reads --protocol: carillon or xxl-job.
func parseProtocol(s string) (carillonv1.ExecutorProtocol, error) {
	switch strings.ToLower(s) {
	case "carillon":
		return carillonv1.ExecutorProtocol_EXECUTOR_PROTOCOL_CARILLON, nil
	case "xxl-job", "xxl_job":
		return carillonv1.ExecutorProtocol_EXECUTOR_PROTOCOL_XXL_JOB, nil
	}
	return 0, usagef("--protocol: want carillon or xxl-job, got %q", s)
}

// protocolName is the PROTOCOL column: carillon, or xxl-job (with
// "+scripts" when the group sends script jobs).
func protocolName(g *carillonv1.Group) string {
	if g.ExecutorProtocol != carillonv1.ExecutorProtocol_EXECUTOR_PROTOCOL_XXL_JOB {
		return "carillon"
	}
	if g.AllowScripts {
		return "xxl-job+scripts"
	}
	return "xxl-job"
}

func groupPauseCmd(e *cmdEnv) *cobra.Command {
	return e.groupIDCmd("pause", "Pause a group: none of its jobs and workflows fires, nor can be triggered, until it is resumed; running runs finish",
		func(ctx context.Context, id int64) (proto.Message, *carillonv1.Group, error) {
			res, err := e.clients().Groups.PauseGroup(ctx, &carillonv1.PauseGroupRequest{Id: id})
			return res, res.GetGroup(), err
		})
}

func groupResumeCmd(e *cmdEnv) *cobra.Command {
	return e.groupIDCmd("resume", "Resume a paused group: its jobs and workflows fire from their next instant (the paused ones are not caught up)",
		func(ctx context.Context, id int64) (proto.Message, *carillonv1.Group, error) {
			res, err := e.clients().Groups.ResumeGroup(ctx, &carillonv1.ResumeGroupRequest{Id: id})
			return res, res.GetGroup(), err
		})
}

// groupIDCmd is the command verb ID, which calls f for the group and
// prints the group it returns.
func (e *cmdEnv) groupIDCmd(verb, short string, f func(ctx context.Context, id int64) (proto.Message, *carillonv1.Group, error)) *cobra.Command {
	cmd := &cobra.Command{Use: verb + " ID", Short: short, Args: exactArgs(1, "a group id")}
	return e.leaf(cmd, func(ctx context.Context, args []string) error {
		id, err := parseID("group", args[0])
		if err != nil {
			return err
		}
		res, g, err := f(ctx, id)
		if err != nil {
			return err
		}
		return e.printFields(res, groupFields(g))
	})
}
