package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/carillonhq/carillon/admin/client"
	"github.com/carillonhq/carillon/admin/internal/failpoint"
	"github.com/carillonhq/carillon/admin/internal/pgtest"
	"github.com/carillonhq/carillon/internal/testkit"
	carillonv1 "github.com/carillonhq/carillon/proto/carillon/v1"
)

const (
	freezeAdmins = 3
	freezeJobs   = 100
	// freezes is how many times an admin is frozen, at each freezePoint in
	// turn.
	freezes = 20
)

// freezePoint is where in a fire's life TestFreeze freezes an admin.
type freezePoint int

const (
	// freezeAhead is 300 ms before an instant, by the clock: about when
	// runs are sent ahead of it.
	freezeAhead freezePoint = iota
	// freezeInstant is on an instant, by the clock.
	freezeInstant
	// freezeCall is just before a call that sends scheduled runs ahead of
	// their instant, after the admin's last look at its lease: the admin
	// stops itself there (failpoint.CallScheduled).
	freezeCall
	// freezeTrigger is inside a TriggerJob call, just before the call to
	// the executor (failpoint.CallManual).
	freezeTrigger
)

func (p freezePoint) String() string {
	return [...]string{"send-ahead point", "instant", "scheduled call", "TriggerJob call"}[p]
}

// TestFreeze freezes admins with SIGSTOP, the way a long GC pause, a VM
// freeze or CPU throttling does, for longer than their lease, at the points
// of a fire's life where a stalled admin could still send a run another
// admin adopted: three real admin processes over one PostgreSQL database,
// two real SDK executors, 100 every-second ROUND_ROBIN jobs, and a job
// triggered by hand during some freezes. Two of the four points are by
// the clock; at the other two the admin stops itself, just after its last
// look at its lease and before its call (package failpoint), the narrowest
// window. A frozen admin wakes with its lease gone and its runs adopted:
// it must run none of them a second time, and record nothing (fencing). At
// the end, as TestCrashLoop does, every instant of every job was run
// exactly once or recorded as a misfire, no run was executed twice or
// without its record, and no settled run was triggered after it finished.
// It prints its seed: -seed N (or CARILLON_CRASHLOOP_SEED=N) replays it.
func TestFreeze(t *testing.T) {
	testkit.Soak(t, "freezes admin processes over PostgreSQL: about 2 minutes")
	db := pgtest.URL(t)
	seed, rng := seededRand(t)
	ctx := context.Background()
	dir := t.TempDir()

	admins, mc, ex, groupID := startCluster(t, db, freezeAdmins, 2, rng, func(i int) []string {
		points := filepath.Join(dir, fmt.Sprint("failpoints", i))
		if err := os.Mkdir(points, 0o700); err != nil {
			t.Fatal(err)
		}
		// Every admin shares the fires, so that a freeze of any of them
		// catches it on the fire path (by default one admin takes a load
		// this small, and the others stand by).
		return []string{failpoint.Env + "=" + points, "CARILLON_FIRES_PER_ADMIN=0"}
	})
	newJob := func(desc, cron string) int64 {
		t.Helper()
		j, err := mc.job.CreateJob(ctx, &carillonv1.CreateJobRequest{Job: &carillonv1.Job{
			GroupId: groupID, Description: desc, Handler: "work", Enabled: true,
			Schedule:        &carillonv1.Schedule{Type: carillonv1.ScheduleType_SCHEDULE_TYPE_CRON, Cron: cron, TimeZone: "UTC"},
			RouteStrategy:   carillonv1.RouteStrategy_ROUTE_STRATEGY_ROUND_ROBIN,
			MisfireStrategy: carillonv1.MisfireStrategy_MISFIRE_STRATEGY_DO_NOTHING,
		}})
		if err != nil {
			t.Fatal(err)
		}
		return j.Job.Id
	}
	var jobIDs []int64
	for i := range freezeJobs {
		jobIDs = append(jobIDs, newJob(fmt.Sprint("every second ", i), "* * * * * ?"))
	}
	manual := newJob("by hand", "0 0 0 1 1 ? 2099")
	time.Sleep(3 * time.Second) // the jobs' first fires, before any freeze

	var calls sync.WaitGroup
	triggered := 0
	var lastFrozen *crashAdmin
	for i, tries := 0, 0; i < freezes; tries++ {
		if tries == 2*freezes {
			t.Fatalf("only %d of %d freezes in %d tries", i, freezes, tries)
		}
		restartExited(admins)
		point := freezePoint(i % 4)
		a := pickFreeze(admins, point, lastFrozen, rng)
		switch point {
		case freezeAhead, freezeInstant:
			at := time.Now().Truncate(time.Second).Add(2 * time.Second)
			if point == freezeAhead {
				at = at.Add(-300 * time.Millisecond)
			}
			time.Sleep(time.Until(at))
			if err := a.cmd.Process.Signal(syscall.SIGSTOP); errors.Is(err, os.ErrProcessDone) {
				continue // it stopped itself since restartExited (its lease ran out in the last freeze): restarted at the next try
			} else if err != nil {
				t.Fatal(err)
			}
		case freezeCall:
			if !a.stopAt(failpoint.CallScheduled, nil) {
				continue // it sent nothing meanwhile: another admin claimed every fire
			}
		case freezeTrigger:
			c := client.New(&http.Client{Timeout: 30 * time.Second}, a.url(), client.WithToken(mc.token))
			triggered++
			if !a.stopAt(failpoint.CallManual, func() {
				calls.Go(func() {
					_, _ = c.Jobs.TriggerJob(ctx, &carillonv1.TriggerJobRequest{JobId: manual}) // its admin may die of the freeze
				})
			}) {
				continue
			}
		}
		i++
		lastFrozen = a
		frozen := time.Duration(2200+rng.Int64N(1000)) * time.Millisecond // the lease (1 s), adoption (200 ms), and a second more
		t.Logf("freeze %d: admin %s at the %s for %s", i, a.addr, point, frozen)
		time.Sleep(frozen)
		if err := a.cmd.Process.Signal(syscall.SIGCONT); err != nil {
			t.Fatal(err)
		}
		time.Sleep(800*time.Millisecond + time.Duration(rng.Int64N(int64(500*time.Millisecond))))
	}
	calls.Wait()
	restartExited(admins)
	time.Sleep(3 * time.Second) // the fires after the last freeze

	stopAt := mc.settle(t, jobIDs, 90*time.Second)
	d := stopCluster(t, admins, db)
	checkCrashLoop(t, seed, freezes, d, ex, stopAt.Add(-time.Second))
	var manualRuns, late int
	if err := d.QueryRow(`SELECT count(*) FROM runs WHERE job_id = $1`, manual).Scan(&manualRuns); err != nil {
		t.Fatal(err)
	}
	// A run SKIPPED before its instant (its job stopped at the end) keeps
	// its instant as triggered_at: it was never sent.
	const sentAfterEnd = `finished_at IS NOT NULL AND triggered_at > finished_at AND status != 8`
	if err := d.QueryRow(`SELECT count(*) FROM runs WHERE ` + sentAfterEnd).Scan(&late); err != nil {
		t.Fatal(err)
	}
	if late > 0 {
		var examples []string
		rows, err := d.Query(`SELECT id, trigger_type, triggered_at - scheduled_at, finished_at - scheduled_at, executor_address, trigger_message, message
			FROM runs WHERE ` + sentAfterEnd + ` ORDER BY id LIMIT 5`)
		if err != nil {
			t.Fatal(err)
		}
		for rows.Next() {
			var id, typ, triggered, finished int64
			var executor, tmsg, msg string
			if err := rows.Scan(&id, &typ, &triggered, &finished, &executor, &tmsg, &msg); err != nil {
				t.Fatal(err)
			}
			examples = append(examples, fmt.Sprintf("run %d (%s): triggered %d ms, finished %d ms after its instant, at %s: %q / %q",
				id, carillonv1.TriggerType(typ), triggered, finished, executor, tmsg, msg))
		}
		rows.Close()
		t.Errorf("seed %d: %d runs were triggered after they finished: a late dispatch record overwrote an earlier one, e.g.\n%s",
			seed, late, strings.Join(examples, "\n"))
	}
	t.Logf("seed %d: %d TriggerJob calls made during freezes created %d runs", seed, triggered, manualRuns)
}

// pickFreeze picks the admin to freeze at point: any, at a point by the
// clock; at a failpoint, one that has served its buckets for a while, for
// the point to be reached: not the admin frozen last (it may yet stop, its
// lease gone) nor one started in the last 5 s (it may hold no buckets
// yet), unless none is left.
func pickFreeze(admins []*crashAdmin, point freezePoint, last *crashAdmin, rng *rand.Rand) *crashAdmin {
	if point == freezeAhead || point == freezeInstant {
		return admins[rng.IntN(len(admins))]
	}
	var settled []*crashAdmin
	for _, a := range admins {
		if a != last && time.Since(a.startedAt) > 5*time.Second {
			settled = append(settled, a)
		}
	}
	if len(settled) == 0 {
		settled = admins
	}
	return settled[rng.IntN(len(settled))]
}

// stopAt arms the admin's failpoint point, calls then, if not nil, and
// waits until the admin stopped itself there; false, the point disarmed,
// if it did not within 5 s.
func (a *crashAdmin) stopAt(point string, then func()) bool {
	a.t.Helper()
	file := filepath.Join(strings.TrimPrefix(a.env[0], failpoint.Env+"="), point)
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		a.t.Fatal(err)
	}
	if then != nil {
		then()
	}
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if _, err := os.Stat(file); errors.Is(err, fs.ErrNotExist) {
			return true
		}
	}
	err := os.Remove(file)
	if errors.Is(err, fs.ErrNotExist) {
		return true // it stopped just now
	}
	if err != nil {
		a.t.Fatal(err)
	}
	a.t.Logf("admin %s did not reach failpoint %s in 5 s", a.addr, point)
	return false
}

// restartExited starts again each admin that exited: one that wakes from
// a freeze with its lease gone stops by design, for a supervisor to start.
func restartExited(admins []*crashAdmin) {
	for _, a := range admins {
		select {
		case <-a.exited:
			a.kill()
			a.start()
		default:
		}
	}
}
