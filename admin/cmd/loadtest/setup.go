package main

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	"github.com/carillonhq/carillon/admin/internal/schedule"
	"github.com/carillonhq/carillon/admin/internal/store"
	carillonv1 "github.com/carillonhq/carillon/proto/carillon/v1"
)

// createGroup creates an AUTO group for app and returns its ID.
func createGroup(ctx context.Context, a *api, app string) (int64, error) {
	res, err := a.groups.CreateGroup(ctx, &carillonv1.CreateGroupRequest{Group: &carillonv1.Group{
		AppName: app, Title: "loadtest", AddressMode: carillonv1.AddressMode_ADDRESS_MODE_AUTO,
	}})
	if err != nil {
		return 0, fmt.Errorf("create group %s: %w", app, err)
	}
	return res.Group.Id, nil
}

// createJobs creates n started jobs of group with the configured schedule
// and route strategy, concurrently.
func createJobs(ctx context.Context, a *api, c *config, group int64, n int) error {
	var next atomic.Int64
	var wg sync.WaitGroup
	errs := make(chan error, c.create)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	for range c.create {
		wg.Go(func() {
			for {
				i := next.Add(1)
				if i > int64(n) || ctx.Err() != nil {
					return
				}
				_, err := a.jobs.CreateJob(ctx, &carillonv1.CreateJobRequest{Job: &carillonv1.Job{
					GroupId: group, Description: fmt.Sprintf("loadtest %d", i), Handler: handlerName,
					Schedule: c.schedule(), RouteStrategy: c.route, Enabled: true, RetryCount: c.retries, RetryDelaySeconds: 1,
				}})
				if err != nil {
					errs <- fmt.Errorf("create job %d of %d: %w", i, n, err)
					cancel()
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	return <-errs
}

// firstFireDelay is how long after seeding the seeded jobs first fire:
// time for the admin to start and the executors to register.
const firstFireDelay = 3 * time.Second

// seedPerJob is how long storing one seeded job is taken to last, at
// most (1,000,000 jobs took 19–57 s on the 2-core machine): the first
// fire waits for the storing too, so that a large seed's first instant is
// not missed, and recorded as a misfire, before the admin starts.
const seedPerJob = 60 * time.Microsecond

// claimPerJob is how much earlier than its instant the admin starts
// claiming a burst, per fire (twice a claim's ~25 µs on the writer, and
// the hand-over's 5 µs a fire: schedule's claimLead), and claimLeadMax
// the most it starts (schedule's claimLeadMax). A seed's first fire waits
// for that lead too, after the storing, so that the admin, which starts
// when the storing ends, claims a large seed's first instant as it claims
// every later one: without it, a 1,000,000-job minute mark fell 25–90 s
// after the admin's start, by the phase of the minute, and was claimed
// and sent in time or mostly refused by that luck (2026-11-28).
const (
	claimPerJob  = 55 * time.Microsecond
	claimLeadMax = 55 * time.Second
)

// seedDelay is how long after the seeding starts the seeded jobs may
// first fire.
func seedDelay(jobs int) time.Duration {
	return firstFireDelay + time.Duration(jobs)*seedPerJob + min(time.Duration(jobs)*claimPerJob, claimLeadMax)
}

// seedJobs stores, straight into the database at path (the admin is not
// running yet), a group for app and c.jobs started jobs with the configured
// schedule and route strategy, as CreateJob would, and returns the group's
// ID. The jobs first fire a few seconds from now; FIX_RATE jobs' first
// fires are spread evenly over one interval.
func seedJobs(ctx context.Context, path, app string, c *config) (int64, error) {
	st, err := store.Open(ctx, path)
	if err != nil {
		return 0, err
	}
	defer func() { _ = st.Close() }()
	now := time.Now()
	g, err := st.Groups.Create(ctx, store.Group{AppName: app, Title: "loadtest", AddressMode: carillonv1.AddressMode_ADDRESS_MODE_AUTO}, now)
	if err != nil {
		return 0, err
	}
	s := c.schedule()
	spec := schedule.Spec{Type: s.Type, Cron: s.Cron, IntervalSeconds: s.IntervalSeconds}
	delay := seedDelay(c.jobs)
	c.seededFrom = now.Add(delay)
	first, err := schedule.First(spec, c.seededFrom)
	if err != nil {
		return 0, fmt.Errorf("schedule: %w", err)
	}
	interval := time.Duration(c.fixRate) * time.Second
	jobs := make([]store.Job, c.jobs)
	for i := range jobs {
		next := first
		if c.fixRate > 0 {
			next = now.Add(delay + time.Duration(i)*interval/time.Duration(c.jobs)).Truncate(time.Millisecond)
		}
		jobs[i] = store.Job{
			GroupID: g.ID, Description: fmt.Sprintf("loadtest %d", i+1), Handler: handlerName, Enabled: true,
			ScheduleType: s.Type, Cron: s.Cron, IntervalSeconds: s.IntervalSeconds,
			MisfireStrategy: carillonv1.MisfireStrategy_MISFIRE_STRATEGY_DO_NOTHING,
			RouteStrategy:   c.route,
			BlockStrategy:   carillonv1.BlockStrategy_BLOCK_STRATEGY_SERIAL,
			NextFireAt:      next,
			RetryCount:      c.retries, RetryDelaySeconds: 1,
		}
	}
	if err := st.Jobs.CreateMany(ctx, jobs, now); err != nil {
		return 0, err
	}
	return g.ID, nil
}

// seedSparse stores, straight into the database at path (the admin is not
// running yet), a group for app and n started jobs with daily crons, each
// at a random second of the day (yearly: of a random day of the year, up
// to the 28th of a month), and returns the group's ID.
func seedSparse(ctx context.Context, path, app string, n int, yearly bool) (int64, error) {
	st, err := store.Open(ctx, path)
	if err != nil {
		return 0, err
	}
	defer func() { _ = st.Close() }()
	now := time.Now()
	g, err := st.Groups.Create(ctx, store.Group{AppName: app, Title: "loadtest sparse", AddressMode: carillonv1.AddressMode_ADDRESS_MODE_AUTO}, now)
	if err != nil {
		return 0, err
	}
	rng := rand.New(rand.NewPCG(uint64(now.UnixNano()), 7))
	const chunk = 50_000
	jobs := make([]store.Job, 0, min(n, chunk))
	for i := range n {
		sec := rng.IntN(86400)
		h, m, s := sec/3600, sec/60%60, sec%60
		y, mo, d := now.Date()
		cron := fmt.Sprintf("%d %d %d * * ?", s, m, h)
		first := time.Date(y, mo, d, h, m, s, 0, time.Local)
		if !first.After(now) {
			first = first.AddDate(0, 0, 1)
		}
		if yearly {
			mo, d = time.Month(1+rng.IntN(12)), 1+rng.IntN(28)
			cron = fmt.Sprintf("%d %d %d %d %d ?", s, m, h, d, mo)
			if first = time.Date(y, mo, d, h, m, s, 0, time.Local); !first.After(now) {
				first = first.AddDate(1, 0, 0)
			}
		}
		jobs = append(jobs, store.Job{
			GroupID: g.ID, Description: fmt.Sprintf("sparse %d", i), Handler: handlerName, Enabled: true,
			ScheduleType: carillonv1.ScheduleType_SCHEDULE_TYPE_CRON, Cron: cron,
			MisfireStrategy: carillonv1.MisfireStrategy_MISFIRE_STRATEGY_DO_NOTHING,
			RouteStrategy:   carillonv1.RouteStrategy_ROUTE_STRATEGY_ROUND_ROBIN,
			BlockStrategy:   carillonv1.BlockStrategy_BLOCK_STRATEGY_SERIAL,
			NextFireAt:      first,
		})
		if len(jobs) == cap(jobs) || i == n-1 {
			if err := st.Jobs.CreateMany(ctx, jobs, now); err != nil {
				return 0, err
			}
			jobs = jobs[:0]
		}
	}
	return g.ID, nil
}
