package schedule_test

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/carillonhq/carillon/admin/internal/dbtest"
	"github.com/carillonhq/carillon/admin/internal/followup"
	"github.com/carillonhq/carillon/admin/internal/schedule"
	"github.com/carillonhq/carillon/admin/internal/store"
	"github.com/carillonhq/carillon/internal/testkit"
	carillonv1 "github.com/carillonhq/carillon/proto/carillon/v1"
)

// crashThreshold is the misfire threshold of the crash test's admins.
const crashThreshold = 2 * time.Second

// TestCrashChild is the admin process of TestCrashRestart: it schedules
// the jobs of the database named by CARILLON_CRASH_DB, "dispatching" each
// fire by claiming and settling its run and appending its ID to
// CARILLON_CRASH_LOG, until it is killed.
func TestCrashChild(t *testing.T) {
	dbPath := os.Getenv("CARILLON_CRASH_DB")
	if dbPath == "" {
		t.Skip("run by TestCrashRestart")
	}
	ctx := context.Background()
	st := dbtest.Open(t, dbPath)
	log, err := os.OpenFile(os.Getenv("CARILLON_CRASH_LOG"), os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	dispatch := func(e schedule.Entry) {
		run, ok := claim(st, e, time.Now())
		if !ok {
			return
		}
		mu.Lock()
		fmt.Fprintf(log, "%d\n", run.ID) // O_APPEND: one write per line
		mu.Unlock()
		if _, err := st.Runs.Settle(ctx, followup.Policy{}, []store.Result{{RunID: run.ID, Status: carillonv1.RunStatus_RUN_STATUS_SUCCEEDED, FinishedAt: time.Now()}}); err != nil {
			fmt.Fprintln(os.Stderr, "settle:", err) // the parent finds the run unsettled
		}
	}
	fire := func(es []schedule.Entry) {
		for _, e := range es {
			go dispatch(e)
		}
	}
	s := schedule.New(schedule.Config{Store: st, MisfireThreshold: crashThreshold,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	fmt.Println("ready")
	if err := s.Run(ctx, schedule.DispatchFunc(fire)); err != nil { // until SIGKILL
		fmt.Fprintln(os.Stderr, "run:", err)
		os.Exit(1)
	}
}

// seed replays TestCrashRestart's kill times: the test prints the seed it
// used (CARILLON_SOAK=1 go test -run TestCrashRestart -seed N ./admin/internal/schedule/).
var seed = flag.Uint64("seed", 0, "TestCrashRestart: the seed of its random kill times (0: a new one, printed)")

// TestCrashRestart kills an admin process with SIGKILL at random moments
// while jobs fire every second, restarts it (sometimes at once, sometimes
// after more than the misfire threshold), and then checks that each (job,
// scheduled instant) has at most one run and was dispatched at most once,
// and that every instant was fired or recorded as missed: the only
// instants without a run of their own are ones that fell due while no
// admin was running and were found more than the threshold late, and each
// of those is in the one misfire record of its job and outage.
func TestCrashRestart(t *testing.T) {
	testkit.Soak(t, "runs for about 30 s")
	t.Parallel()
	dir := t.TempDir()
	dbPath, logPath := filepath.Join(dir, "carillon.db"), filepath.Join(dir, "fired.log")
	ctx := context.Background()

	st, g := setup(t, dbPath) // SQLite only: it kills the admin process writing the file
	start := time.Now().Truncate(time.Second).Add(2 * time.Second)
	const jobs = 6
	for i := range jobs {
		j := fixRate(g, 1, start)
		if i%2 == 1 {
			j.MisfireStrategy = carillonv1.MisfireStrategy_MISFIRE_STRATEGY_FIRE_ONCE_NOW
		} else {
			j.MisfireStrategy = carillonv1.MisfireStrategy_MISFIRE_STRATEGY_DO_NOTHING
		}
		if _, err := st.Jobs.Create(ctx, j, time.Now()); err != nil {
			t.Fatal(err)
		}
	}
	st.Close()

	type down struct{ from, to time.Time } // no admin scheduling in (from, to]
	var downs []down
	s := *seed
	if s == 0 {
		s = uint64(time.Now().UnixNano())
	}
	t.Logf("seed %d (-seed %d replays it)", s, s)
	rnd := rand.New(rand.NewPCG(s, 7))
	lastKill := time.Now() // no admin yet: the first start may come after the first instants
	for cycle := range 10 {
		cmd := exec.Command(os.Args[0], "-test.run=^TestCrashChild$", "-test.v=false")
		cmd.Env = append(os.Environ(), "CARILLON_CRASH_DB="+dbPath, "CARILLON_CRASH_LOG="+logPath)
		out, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		cmd.Stderr = os.Stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		if !waitReady(out) {
			_ = cmd.Process.Kill() // it may have exited already
			_ = cmd.Wait()
			t.Fatalf("cycle %d: child never became ready", cycle)
		}
		downs = append(downs, down{lastKill, time.Now()})
		go func() { _, _ = io.Copy(io.Discard, out) }()
		time.Sleep(time.Duration(300+rnd.IntN(2500)) * time.Millisecond) // the child process runs, 0.3-2.8 s: what is killed is its random moment
		_ = cmd.Process.Signal(syscall.SIGKILL)                          // it may have exited already
		_ = cmd.Wait()
		lastKill = time.Now()
		time.Sleep(time.Duration(rnd.IntN(4000)) * time.Millisecond) // no process runs, 0-4 s: sometimes past the misfire threshold
	}
	end := lastKill
	var outages []string
	for _, d := range downs {
		outages = append(outages, d.from.Format(time.TimeOnly+".000")+" to "+d.to.Format(time.TimeOnly+".000"))
	}

	st = dbtest.Open(t, dbPath)
	fired := map[int64]int{}
	if data, err := os.ReadFile(logPath); err == nil {
		for _, line := range strings.Fields(string(data)) {
			id, _ := strconv.ParseInt(line, 10, 64)
			fired[id]++
		}
	}
	for id, n := range fired {
		if n > 1 {
			t.Errorf("run %d was dispatched %d times", id, n)
		}
	}
	js, err := st.Jobs.List(ctx, store.JobFilter{Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	totalRuns := 0
	for _, j := range js {
		runs, err := st.Runs.List(ctx, store.RunFilter{JobID: j.ID, Limit: 1000})
		if err != nil {
			t.Fatal(err)
		}
		totalRuns += len(runs)
		byInstant := map[time.Time]store.Run{}
		for _, r := range runs {
			if prev, dup := byInstant[r.ScheduledAt]; dup {
				t.Errorf("job %d instant %v has runs %d and %d", j.ID, r.ScheduledAt, prev.ID, r.ID)
			}
			byInstant[r.ScheduledAt] = r
			if r.Status == carillonv1.RunStatus_RUN_STATUS_SUCCEEDED && fired[r.ID] != 1 {
				t.Errorf("run %d succeeded but was dispatched %d times", r.ID, fired[r.ID])
			}
		}
		// Every instant of the job's one-second grid up to the last kill
		// has a run, or is one of the missed instants of one misfire
		// record (an outage found more than the threshold late), and only
		// one: FIX_RATE keeps its phase across outages.
		covered := map[int64]int64{} // by instant, unix ms
		cover := func(at time.Time, id int64) {
			if prev, dup := covered[at.UnixMilli()]; dup {
				t.Errorf("job %d instant %v is covered by runs %d and %d", j.ID, at.Format(time.TimeOnly+".000"), prev, id)
			}
			covered[at.UnixMilli()] = id
		}
		for _, r := range runs {
			if r.MissedCount == 0 {
				cover(r.ScheduledAt, r.ID)
				continue
			}
			if n := int64(r.MissedUntil.Sub(r.ScheduledAt)/time.Second) + 1; n != r.MissedCount {
				t.Errorf("job %d: misfire record %d of %v through %v says %d instants, want %d",
					j.ID, r.ID, r.ScheduledAt.Format(time.TimeOnly+".000"), r.MissedUntil.Format(time.TimeOnly+".000"), r.MissedCount, n)
			}
			for at := r.ScheduledAt; !at.After(r.MissedUntil); at = at.Add(time.Second) {
				cover(at, r.ID)
			}
		}
		for at := start; at.Before(end.Add(-time.Second)); at = at.Add(time.Second) {
			if _, ok := covered[at.UnixMilli()]; !ok {
				t.Errorf("job %d: instant %v has no run and no misfire record (outages %s)", j.ID, at.Format(time.TimeOnly+".000"), outages)
			}
		}
	}
	if len(fired) < jobs*5 {
		t.Errorf("only %d fires in all; the test did not exercise the scheduler", len(fired))
	}
	t.Logf("10 kills, %d runs, %d dispatched, %d outages", totalRuns, len(fired), len(downs))
}

// waitReady reads the child's output until it says "ready" (within 30 s).
func waitReady(r io.Reader) bool {
	ready := make(chan bool, 1)
	go func() {
		sc := bufio.NewScanner(r)
		for sc.Scan() {
			if strings.TrimSpace(sc.Text()) == "ready" {
				ready <- true
				return
			}
		}
		ready <- false
	}()
	select {
	case ok := <-ready:
		return ok
	case <-time.After(30 * time.Second):
		return false
	}
}
