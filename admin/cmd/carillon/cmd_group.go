package main

import (
	"context"
	"fmt"
	"strings"

	carillonv1 "github.com/carillonhq/carillon/proto/carillon/v1"
)

func cmdGroup(ctx context.Context, e *cmdEnv, args []string) error {
	return sub(ctx, e, "group", args, map[string]func(context.Context, *cmdEnv, []string) error{
		"list": groupList, "get": groupGet, "create": groupCreate, "delete": groupDelete, "token": groupToken,
	})
}

func groupRow(g *carillonv1.Group) []string {
	return []string{fmtID(g.Id), g.AppName, g.Title, enumName(g.AddressMode, "ADDRESS_MODE_"), protocolName(g),
		orDash(strings.Join(g.Addresses, ","))}
}

var groupHeader = []string{"ID", "APP", "TITLE", "MODE", "PROTOCOL", "EXECUTORS"}

func groupList(ctx context.Context, e *cmdEnv, args []string) error {
	fs := e.flags("group list")
	if _, err := e.parse(fs, args, 0, "no arguments"); err != nil {
		return err
	}
	res, err := e.clients().group.ListGroups(ctx, &carillonv1.ListGroupsRequest{})
	if err != nil {
		return err
	}
	var rows [][]string
	for _, g := range res.Groups {
		rows = append(rows, groupRow(g))
	}
	return e.print(res, groupHeader, rows)
}

func groupGet(ctx context.Context, e *cmdEnv, args []string) error {
	fs := e.flags("group get")
	pos, err := e.parse(fs, args, 1, "a group id")
	if err != nil {
		return err
	}
	id, err := parseID("group", pos[0])
	if err != nil {
		return err
	}
	res, err := e.clients().group.GetGroup(ctx, &carillonv1.GetGroupRequest{Id: id})
	if err != nil {
		return err
	}
	return e.print(res, groupHeader, [][]string{groupRow(res.Group)})
}

func groupCreate(ctx context.Context, e *cmdEnv, args []string) error {
	fs := e.flags("group create")
	title := fs.String("title", "", "title (default: the app name)")
	manual := fs.String("manual", "", "MANUAL mode with these executor URLs, comma-separated (default: AUTO, the registered executors)")
	protocol := fs.String("protocol", "carillon", "the executors' protocol: carillon (the SDK) or xxl-job (xxl-job-core, xxl-job-executor-go)")
	allowScripts := fs.Bool("allow-scripts", false, "xxl-job groups: send script (GLUE) jobs to the executors")
	pos, err := e.parse(fs, args, 1, "an app name: carillon group create APP")
	if err != nil {
		return err
	}
	p, err := parseProtocol(*protocol)
	if err != nil {
		return err
	}
	g := &carillonv1.Group{AppName: pos[0], Title: *title, ExecutorProtocol: p, AllowScripts: *allowScripts}
	if *manual != "" {
		g.AddressMode, g.Addresses = carillonv1.AddressMode_ADDRESS_MODE_MANUAL, splitList(*manual)
	}
	res, err := e.clients().group.CreateGroup(ctx, &carillonv1.CreateGroupRequest{Group: g})
	if err != nil {
		return err
	}
	return e.print(res, groupHeader, [][]string{groupRow(res.Group)})
}

func groupDelete(ctx context.Context, e *cmdEnv, args []string) error {
	fs := e.flags("group delete")
	pos, err := e.parse(fs, args, 1, "a group id")
	if err != nil {
		return err
	}
	id, err := parseID("group", pos[0])
	if err != nil {
		return err
	}
	res, err := e.clients().group.DeleteGroup(ctx, &carillonv1.DeleteGroupRequest{Id: id})
	if err != nil {
		return err
	}
	if e.json {
		return e.printJSON(res)
	}
	fmt.Fprintf(e.io.out, "deleted group %d\n", id)
	return nil
}

// groupToken gives a group an executor token of its own (printed alone, for
// scripts), or with --clear returns it to the global token.
func groupToken(ctx context.Context, e *cmdEnv, args []string) error {
	fs := e.flags("group token")
	clear := fs.Bool("clear", false, "return the group to the global executor token")
	pos, err := e.parse(fs, args, 1, "a group id")
	if err != nil {
		return err
	}
	id, err := parseID("group", pos[0])
	if err != nil {
		return err
	}
	if *clear {
		res, err := e.clients().group.ClearGroupToken(ctx, &carillonv1.ClearGroupTokenRequest{Id: id})
		if err != nil {
			return err
		}
		if e.json {
			return e.printJSON(res)
		}
		fmt.Fprintf(e.io.out, "group %d uses the global executor token again\n", id)
		return nil
	}
	res, err := e.clients().group.RotateGroupToken(ctx, &carillonv1.RotateGroupTokenRequest{Id: id})
	if err != nil {
		return err
	}
	if e.json {
		return e.printJSON(res)
	}
	fmt.Fprintln(e.io.out, res.Token)
	return nil
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
