package main

import (
	"context"
	"database/sql"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"testing"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // the database the admins left, read directly

	"github.com/carillonhq/carillon/admin/internal/pgtest"
	"github.com/carillonhq/carillon/internal/testkit"
	carillonv1 "github.com/carillonhq/carillon/proto/carillon/v1"
)

const (
	failoverAdmins = 3
	failoverJobs   = 30
	failoverKills  = 4
	// failoverGapMax is how late the fires due around a kill may reach
	// an executor: the dead admin's lease (1 s) runs out, another adopts
	// its claims within 200 ms and sends them.
	failoverGapMax = 2 * time.Second
)

// TestFailover runs three real admin processes over one PostgreSQL
// database, with three real SDK executors that list them all and 30
// every-second jobs and a workflow every 3 s, and kills a random admin
// with SIGKILL four times, restarting it each time. Then, as TestCrashLoop
// does, it checks in the database that every scheduled instant was run
// exactly once or recorded as a misfire, that the executors ran no fire
// twice, and that each node of each workflow run that succeeded ran
// exactly once; and, from the
// executors' receipts, that the fires due from a second before each kill to
// three seconds after it reached an executor at most failoverGapMax late.
// It prints its seed: -seed N (or CARILLON_CRASHLOOP_SEED=N) replays it.
func TestFailover(t *testing.T) {
	testkit.Soak(t, "kills admin processes over PostgreSQL: about 40 s")
	db := pgtest.URL(t)
	seed, rng := seededRand(t)
	ctx := context.Background()

	admins, mc, ex, groupID := startCluster(t, db, failoverAdmins, 3, rng, nil)
	var jobIDs []int64
	for i := range failoverJobs {
		j, err := mc.job.CreateJob(ctx, &carillonv1.CreateJobRequest{Job: &carillonv1.Job{
			GroupId: groupID, Description: fmt.Sprint("every second ", i), Handler: "work", Enabled: true,
			Schedule:        &carillonv1.Schedule{Type: carillonv1.ScheduleType_SCHEDULE_TYPE_CRON, Cron: "* * * * * ?", TimeZone: "UTC"},
			RouteStrategy:   carillonv1.RouteStrategy_ROUTE_STRATEGY_ROUND_ROBIN,
			MisfireStrategy: carillonv1.MisfireStrategy_MISFIRE_STRATEGY_DO_NOTHING,
		}})
		if err != nil {
			t.Fatal(err)
		}
		jobIDs = append(jobIDs, j.Job.Id)
	}
	wf := createCrashWorkflow(t, mc, groupID)

	// Up 4 to 6 s, then a random admin killed and restarted after up to
	// 1 s: the others adopt what it had claimed.
	var kills []time.Time
	for range failoverKills {
		time.Sleep(4*time.Second + time.Duration(rng.Int64N(int64(2*time.Second))))
		a := admins[rng.IntN(len(admins))]
		kills = append(kills, time.Now())
		a.kill()
		time.Sleep(time.Duration(rng.Int64N(int64(time.Second))))
		a.start()
		restartExited(admins) // a supervisor: an admin that lost its lease is started again
	}
	time.Sleep(4 * time.Second) // the fires after the last kill

	wf.stop(t, mc)
	stopAt := mc.settle(t, jobIDs, 30*time.Second)
	d := stopCluster(t, admins, db)
	checkCrashLoop(t, seed, len(kills), d, ex, stopAt.Add(-time.Second))
	checkCrashWorkflow(t, seed, d, ex, wf)
	checkFailoverGaps(t, seed, ex, kills, stopAt.Add(-time.Second))
}

// stopCluster stops the admins cleanly and returns their database db,
// open, to check what they left.
func stopCluster(t *testing.T, admins []*crashAdmin, db string) *sql.DB {
	t.Helper()
	for _, a := range admins {
		a.stop()
	}
	d, err := sql.Open("pgx", db)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	return d
}

// startCluster starts n admin processes over the PostgreSQL database db,
// one after another (the first creates the schema and the first ADMIN),
// each with the environment env returns for it (nil: none more), and
// executors real SDK executors of a new group "crash" that list them all;
// it returns the admins, a session of the first, what the executors ran,
// and the group's id.
func startCluster(t *testing.T, db string, n, executors int, rng *rand.Rand, env func(i int) []string) ([]*crashAdmin, crashClients, *executions, int64) {
	t.Helper()
	ctx := context.Background()
	dir := t.TempDir()
	var admins []*crashAdmin
	var urls []string
	for i := range n {
		a := &crashAdmin{t: t, db: db, log: filepath.Join(dir, fmt.Sprintf("admin%d.log", i)), addr: freeAddr(t)}
		if env != nil {
			a.env = env(i)
		}
		a.start()
		t.Cleanup(a.kill)
		t.Cleanup(func() { // after the kill: the end of its log, when the test failed
			if t.Failed() {
				t.Logf("the end of admin %s's log:\n%s", a.addr, a.tail())
			}
		})
		admins = append(admins, a)
		urls = append(urls, a.url())
	}
	mc := admins[0].login(ctx)
	ex := &executions{byRun: map[int64]int{}, byFire: map[string]int{}}
	for range executors {
		startCrashExecutor(t, urls, ex, rng.Uint64())
	}
	g, err := mc.group.CreateGroup(ctx, &carillonv1.CreateGroupRequest{Group: &carillonv1.Group{AppName: "crash"}})
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, 20*time.Second, fmt.Sprint(executors, " executors registered"), func() (bool, error) {
		res, err := mc.group.GetGroup(ctx, &carillonv1.GetGroupRequest{Id: g.Group.Id})
		return err == nil && len(res.Group.Addresses) == executors, err
	})
	return admins, mc, ex, g.Group.Id
}

// checkFailoverGaps checks, for each kill, how late the fires due from a
// second before it to three seconds after it reached an executor (before
// end): at most failoverGapMax.
func checkFailoverGaps(t *testing.T, seed uint64, ex *executions, kills []time.Time, end time.Time) {
	t.Helper()
	ex.mu.Lock()
	defer ex.mu.Unlock()
	var gaps []string
	for i, k := range kills {
		from, to := k.Add(-time.Second), k.Add(3*time.Second)
		if to.After(end) {
			to = end
		}
		var gap time.Duration
		fires := 0
		for _, r := range ex.receipts {
			if r.scheduled.Before(from) || r.scheduled.After(to) {
				continue
			}
			fires++
			gap = max(gap, r.reached.Sub(r.scheduled))
		}
		gaps = append(gaps, gap.Round(time.Millisecond).String())
		if fires == 0 {
			t.Errorf("seed %d: kill %d at %s: no fire due from %s to %s reached an executor", seed, i+1,
				k.UTC().Format("15:04:05.000"), from.UTC().Format("15:04:05"), to.UTC().Format("15:04:05"))
			continue
		}
		if gap > failoverGapMax {
			t.Errorf("seed %d: kill %d at %s: a fire due around it reached an executor %s late, want at most %s",
				seed, i+1, k.UTC().Format("15:04:05.000"), gap.Round(time.Millisecond), failoverGapMax)
		}
	}
	t.Logf("seed %d: the latest fire due around each kill reached an executor %v late (want at most %s)",
		seed, gaps, failoverGapMax)
}
