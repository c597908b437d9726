package main

import (
	"context"
	"fmt"
	"sync"
	"time"

	"google.golang.org/protobuf/types/known/timestamppb"

	carillonv1 "github.com/carillonhq/carillon/proto/carillon/v1"
)

// fireKey names one scheduled fire: a job at an instant.
type fireKey struct {
	job int64
	at  int64 // unix milliseconds
}

// window is what was observed over the measured window.
type window struct {
	start, end     time.Time
	admin          [2]sample   // the admins' CPU at start and end, summed (takeSamples)
	each           [2][]sample // each admin's, in the order of --admins
	self           [2]sample   // this process's CPU at start and end
	rss, peakRSS   int64       // the admin's VmRSS at the end and VmHWM
	maxRSS         int64       // the largest VmRSS sampled during the window
	done           [2]completedCount
	expected       map[fireKey]bool
	receipts       []receipt
	sparseReceipts []receipt
	perfTop        string
	claimed        []float64                        // the admin's claim lateness, ms, sorted
	kills          []time.Time                      // --chaos: when each admin was killed
	exits          int                              // --chaos: admins that exited by themselves
	misfires       map[int64][]span                 // fires of the window recorded as misfires, by job
	stored         map[fireKey]carillonv1.RunStatus // the status of each scheduled fire's run (storedRuns)
}

// completedCount is the dashboard's count of finished runs at a time.
type completedCount struct {
	at                time.Time
	succeeded, failed int64
	err               error
}

func countCompleted(ctx context.Context, a *api) completedCount {
	at := time.Now() // the count is as of the query's start; on a big database it takes a while
	s, f, err := a.completed(ctx)
	return completedCount{at: at, succeeded: s, failed: f, err: err}
}

// measure observes the window: it starts on the next whole second, lasts
// c.duration, and then waits up to c.grace for fires of the window still
// on their way.
func measure(ctx context.Context, c *config, a *api, pids []int, group int64, rec, sparseRec *recorder,
	profile func(context.Context, time.Duration) error, ch *chaos) (*window, error) {
	pid := pids[0] // perf and memory: the first admin
	w := &window{start: time.Now().Truncate(time.Second).Add(time.Second)}
	w.end = w.start.Add(c.duration)
	if err := sleepUntil(ctx, w.start); err != nil {
		return nil, err
	}
	progress("measuring %s to %s", w.start.Format(time.TimeOnly), w.end.Format(time.TimeOnly))
	// The dashboard's counts first: with a million jobs its queries take a
	// moment of the admin's CPU, which is not the load being measured.
	w.done[0] = countCompleted(ctx, a)
	w.admin[0], w.self[0], w.each[0] = takeSamples(pids), takeSample(0), takeEach(pids)
	if ch != nil {
		ch.done = make(chan struct{})
		go ch.run(ctx, w.end)
	}

	var perf *perfRun
	if c.perfOut != "" && pid != 0 {
		var err error
		if perf, err = startPerf(ctx, pid, c.perfOut, time.Until(w.end)); err != nil {
			return nil, err
		}
	}
	profiled := make(chan error, 1)
	if profile != nil {
		go func() { profiled <- profile(ctx, time.Until(w.end)) }()
	} else {
		profiled <- nil
	}
	stopRSS := make(chan struct{})
	var rssDone sync.WaitGroup
	rssDone.Go(func() {
		t := time.NewTicker(time.Second)
		defer t.Stop()
		for {
			if rss, _, err := memory(pid); err == nil && pid != 0 {
				w.maxRSS = max(w.maxRSS, rss)
			}
			select {
			case <-stopRSS:
				return
			case <-t.C:
			}
		}
	})
	err := sleepUntil(ctx, w.end)
	close(stopRSS)
	rssDone.Wait()
	if err != nil {
		return nil, err
	}
	w.admin[1], w.self[1], w.each[1] = takeSamples(pids), takeSample(0), takeEach(pids)
	if ch != nil {
		<-ch.done // every admin serves again
		w.kills, w.exits = ch.kills, ch.exits
		if ch.err != nil {
			return nil, fmt.Errorf("--chaos: %w", ch.err)
		}
	}
	if pid != 0 {
		w.rss, w.peakRSS, _ = memory(pid)
	}
	w.done[1] = countCompleted(ctx, a)
	if perf != nil {
		if w.perfTop, err = perf.finish(ctx); err != nil {
			progress("perf: %v", err)
		}
	}

	if group != 0 {
		from := w.start
		if c.seededFrom.After(from) {
			from = c.seededFrom // the seeded jobs fire from then on
		}
		if w.expected, err = expectedFires(ctx, a, group, from, w.end); err != nil {
			return nil, err
		}
		deadline := w.end.Add(c.grace)
		for !allReceived(w.expected, rec.snapshot()) && time.Now().Before(deadline) {
			if err := sleep(ctx, 200*time.Millisecond); err != nil {
				return nil, err
			}
		}
	}
	if err := <-profiled; err != nil {
		progress("admin profiles: %v", err)
	}
	w.receipts, w.sparseReceipts = rec.snapshot(), sparseRec.snapshot()
	return w, nil
}

func allReceived(expected map[fireKey]bool, receipts []receipt) bool {
	got := make(map[fireKey]bool, len(expected))
	for _, r := range receipts {
		k := fireKey{r.job, r.at}
		if expected[k] {
			got[k] = true
		}
	}
	return len(got) == len(expected)
}

// expectedFires lists every (job, instant) of group's jobs scheduled in
// [start, end) after the job was created: for CRON from PreviewSchedule,
// for FIX_RATE from the job's next fire, which fixes its phase.
func expectedFires(ctx context.Context, a *api, group int64, start, end time.Time) (map[fireKey]bool, error) {
	expected := map[fireKey]bool{}
	previews := map[string][]time.Time{}
	req := &carillonv1.ListJobsRequest{GroupId: group, PageSize: 500}
	for {
		res, err := a.jobs.ListJobs(ctx, req)
		if err != nil {
			return nil, fmt.Errorf("list jobs: %w", err)
		}
		for _, j := range res.Jobs {
			created := j.CreatedAt.AsTime()
			var instants []time.Time
			switch s := j.Schedule; s.Type {
			case carillonv1.ScheduleType_SCHEDULE_TYPE_CRON:
				key := s.Cron + "\x00" + s.TimeZone
				if _, ok := previews[key]; !ok {
					if previews[key], err = preview(ctx, a, s, start, end); err != nil {
						return nil, err
					}
				}
				instants = previews[key]
			case carillonv1.ScheduleType_SCHEDULE_TYPE_FIX_RATE:
				if j.NextFireAt == nil {
					continue // stopped, or its schedule broke: nothing expected
				}
				instants = fixRate(j.NextFireAt.AsTime(), time.Duration(s.IntervalSeconds)*time.Second, start, end)
			default:
				return nil, fmt.Errorf("job %d: schedule %s: only CRON and FIX_RATE are measured", j.Id, s.Type)
			}
			for _, t := range instants {
				if t.After(created) {
					expected[fireKey{j.Id, t.UnixMilli()}] = true
				}
			}
		}
		if res.NextPageToken == "" {
			return expected, nil
		}
		req.PageToken = res.NextPageToken
	}
}

// preview returns the fire times of s in [start, end).
func preview(ctx context.Context, a *api, s *carillonv1.Schedule, start, end time.Time) ([]time.Time, error) {
	var out []time.Time
	from := start.Add(-time.Millisecond) // PreviewSchedule's times are strictly after from
	for {
		res, err := a.jobs.PreviewSchedule(ctx, &carillonv1.PreviewScheduleRequest{Schedule: s, Count: 100, From: ts(from)})
		if err != nil {
			return nil, fmt.Errorf("preview %q: %w", s.Cron, err)
		}
		if len(res.FireTimes) == 0 {
			return out, nil
		}
		for _, p := range res.FireTimes {
			t := p.AsTime()
			if !t.Before(end) {
				return out, nil
			}
			out = append(out, t)
			from = t
		}
	}
}

// fixRate returns the instants in [start, end) of a FIX_RATE schedule
// with the given interval that fires at next.
func fixRate(next time.Time, interval time.Duration, start, end time.Time) []time.Time {
	phase := next.Sub(start) % interval
	if phase < 0 {
		phase += interval
	}
	var out []time.Time
	for t := start.Add(phase); t.Before(end); t = t.Add(interval) {
		out = append(out, t)
	}
	return out
}

func ts(t time.Time) *timestamppb.Timestamp { return timestamppb.New(t) }
