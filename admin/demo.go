package admin

import (
	"context"
	"errors"
	"fmt"
	"net"
	"time"

	"github.com/carillonhq/carillon/admin/internal/schedule"
	"github.com/carillonhq/carillon/admin/internal/store"
	carillonv1 "github.com/carillonhq/carillon/proto/carillon/v1"
	"github.com/carillonhq/carillon/sdk"
)

// The demo's group and job, created on first start and reused after.
const (
	demoApp  = "demo"
	demoCron = "*/5 * * * * ?"
)

// runDemo starts an in-process executor for the "demo" app with a "hello"
// handler, and makes sure a demo group and an enabled demo job exist, so a
// newcomer sees runs succeed every 5 seconds. It serves until ctx ends.
func runDemo(ctx context.Context, a *Admin, adminURL string) error {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return fmt.Errorf("admin: demo executor: %w", err)
	}
	ex, err := sdk.New(sdk.Config{
		AdminURLs: []string{adminURL}, AppName: demoApp, AccessToken: a.cfg.Token, Logger: a.cfg.Logger,
		// Run logs live beside the database: they belong to its run IDs, and a
		// fresh database must not meet the logs of an earlier one.
		LogDir: a.cfg.DBPath + ".logs",
	})
	if err != nil {
		_ = ln.Close()
		return fmt.Errorf("admin: demo executor: %w", err)
	}
	ex.HandleFunc("hello", func(ctx context.Context, job *sdk.Job) error {
		job.Logf("hello from the demo executor: run %d, param %q", job.RunID, job.Param)
		return nil
	})
	if err := ensureDemoJob(ctx, a); err != nil {
		return errors.Join(err, ln.Close())
	}
	a.cfg.Logger.Info("demo: executor started; job \"demo hello\" runs every 5 s; watch the \"run finished\" lines")
	if a.cfg.HideSecrets {
		a.cfg.Logger.Info("demo: no API token printed: this admin's output is not a terminal; log in with carillon login "+
			"and create one with carillon token create", "url", adminURL)
	} else if err := printDemoAccess(ctx, a.store, a.cfg.Console, adminURL, a.cfg.DBPath); err != nil {
		return errors.Join(err, ln.Close())
	}
	return ex.Serve(ctx, ln)
}

// ensureDemoJob creates the demo group and job unless they exist, and
// starts the job.
func ensureDemoJob(ctx context.Context, a *Admin) error {
	now := time.Now()
	groups, err := a.store.Groups.List(ctx)
	if err != nil {
		return err
	}
	var group store.Group
	for _, g := range groups {
		if g.AppName == demoApp {
			group = g
		}
	}
	if group.ID == 0 {
		group, err = a.store.Groups.Create(ctx, store.Group{
			AppName: demoApp, Title: "Demo executor (carillon serve --demo)", AddressMode: carillonv1.AddressMode_ADDRESS_MODE_AUTO,
		}, now)
		if err != nil {
			return err
		}
	}
	jobs, err := a.store.Jobs.List(ctx, store.JobFilter{GroupID: group.ID, Handler: "hello", Limit: 1})
	if err != nil {
		return err
	}
	if len(jobs) > 0 {
		if !jobs[0].Enabled {
			next, err := schedule.First(schedule.SpecOf(jobs[0]), now)
			if err != nil {
				return err
			}
			_, err = a.store.Jobs.Start(ctx, jobs[0].ID, next, now)
			return err
		}
		return nil
	}
	job := store.Job{
		GroupID: group.ID, Description: "demo hello", Owner: "carillon", ScheduleType: carillonv1.ScheduleType_SCHEDULE_TYPE_CRON,
		Cron: demoCron, MisfireStrategy: carillonv1.MisfireStrategy_MISFIRE_STRATEGY_DO_NOTHING,
		RouteStrategy: carillonv1.RouteStrategy_ROUTE_STRATEGY_ROUND_ROBIN, Handler: "hello", Param: "world",
		BlockStrategy: carillonv1.BlockStrategy_BLOCK_STRATEGY_SERIAL, Enabled: true,
	}
	if job.NextFireAt, err = schedule.First(schedule.SpecOf(job), now); err != nil {
		return err
	}
	_, err = a.store.Jobs.Create(ctx, job, now)
	a.scheduler.Wake()
	return err
}
