package main

import (
	"context"
	"fmt"
	"time"

	"github.com/spf13/cobra"
	"google.golang.org/protobuf/types/known/timestamppb"

	carillonv1 "github.com/carillonhq/carillon/proto/carillon/v1"
)

func dashboardCmd(e *cmdEnv) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "dashboard",
		Short: "Count jobs, live executors and runs per day (a MEMBER's: of their groups)",
		Args:  exactArgs(0, "no arguments"),
	}
	days := cmd.Flags().Int("days", 7, "runs per day over this many days, today included (1 to 366)")
	return e.leaf(cmd, func(ctx context.Context, _ []string) error {
		if *days < 1 || *days > 366 {
			return usagef("--days: want 1 to 366, not %d", *days)
		}
		// The last --days days, today included, as the console counts
		// them: 7 days are today and the 6 before it.
		now := time.Now()
		res, err := e.clients().Reports.GetDashboard(ctx, &carillonv1.GetDashboardRequest{
			From: timestamppb.New(now.AddDate(0, 0, 1-*days)), To: timestamppb.New(now),
		})
		if err != nil {
			return err
		}
		if e.json {
			return e.printJSON(res)
		}
		fmt.Fprintf(e.io.out, "Jobs: %d (%d started)   Live executors: %d   Runs: %d (%d days)\n\n",
			res.JobCount, res.EnabledJobCount, res.ExecutorCount, res.RunCount, *days)
		var rows [][]string
		for _, d := range res.Days {
			rows = append(rows, []string{d.Day, fmt.Sprint(d.Succeeded), fmt.Sprint(d.Failed), fmt.Sprint(d.Running)})
		}
		return e.print(res, []string{"DAY", "SUCCEEDED", "FAILED", "RUNNING"}, rows)
	})
}
