package main

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	carillonv1 "github.com/carillonhq/carillon/proto/carillon/v1"
)

func auditCmd(e *cmdEnv) *cobra.Command {
	cmd := &cobra.Command{
		Use:     "audit",
		Short:   "Read the audit log, newest first (ADMIN)",
		Example: "  carillon audit --user admin --action JobService.DeleteJob",
		Args:    exactArgs(0, "no arguments"),
	}
	user := cmd.Flags().String("user", "", "only entries by this username")
	action := cmd.Flags().String("action", "", "only entries of this action, e.g. JobService.DeleteJob")
	most := ruleMax(&carillonv1.ListAuditLogRequest{}, "page_size")
	limit := cmd.Flags().Int("limit", 50, fmt.Sprintf("at most this many entries (1 to %d)", most))
	from := cmd.Flags().String("from", "", "only entries at or after this RFC 3339 time")
	to := cmd.Flags().String("to", "", "only entries before this RFC 3339 time")
	return e.leaf(cmd, func(ctx context.Context, _ []string) error {
		if *limit < 1 || *limit > most {
			return usagef("--limit: want 1 to %d, not %d", most, *limit)
		}
		req := &carillonv1.ListAuditLogRequest{Username: *user, Action: *action, PageSize: int32(*limit)} //nolint:gosec // range checked above
		var err error
		if req.From, err = parseTime("from", *from); err != nil {
			return err
		}
		if req.To, err = parseTime("to", *to); err != nil {
			return err
		}
		res, err := e.clients().Users.ListAuditLog(ctx, req)
		if err != nil {
			return err
		}
		var rows [][]string
		for _, a := range res.Entries {
			rows = append(rows, []string{fmtTime(a.Time), a.Username, a.Action, orDash(a.Target), orDash(a.Peer)})
		}
		return e.print(res, []string{"TIME", "USER", "ACTION", "TARGET", "PEER"}, rows)
	})
}

func executorTokenCmd(e *cmdEnv) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "executor-token",
		Short: "Print the executor access token executors register with (ADMIN)",
		Long: `Print the global executor access token, alone on stdout: executors send it
(sdk.Config.AccessToken, CARILLON_TOKEN for examples/executor). ADMIN only.`,
		Example: "  CARILLON_TOKEN=$(carillon executor-token) && export CARILLON_TOKEN",
		Args:    exactArgs(0, "no arguments"),
	}
	return e.leaf(cmd, func(ctx context.Context, _ []string) error {
		res, err := e.clients().Users.GetExecutorToken(ctx, &carillonv1.GetExecutorTokenRequest{})
		if err != nil {
			return err
		}
		return e.printDone(res, "%s", res.Token)
	})
}
