package main

import (
	"context"
	"database/sql"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"connectrpc.com/connect"
	_ "modernc.org/sqlite" // the database the admin left, read directly

	"github.com/carillonhq/carillon/admin/client"
	"github.com/carillonhq/carillon/internal/testkit"
	carillonv1 "github.com/carillonhq/carillon/proto/carillon/v1"
	"github.com/carillonhq/carillon/proto/carillon/v1/carillonv1connect"
	"github.com/carillonhq/carillon/sdk"
)

// TestMain runs carillon (main) when a test starts this test binary as
// carillon (newBinary's process tests, the crash loop's admin, the
// README's walk-through), and an SDK executor when
// TestExecutorCrashCutsRunsShort starts it as its executor process.
func TestMain(m *testing.M) {
	if os.Getenv("CARILLON_TEST_MAIN") == "1" {
		main()
		return
	}
	if os.Getenv(crashExecutorEnv) == "1" {
		os.Exit(runCrashExecutor())
	}
	os.Exit(m.Run())
}

const (
	crashToken    = "crash-loop-token"
	crashPassword = "crash loop password"
	crashJobs     = 8
	crashes       = 22
)

// seedFlag replays TestCrashLoop's kill times and executor delays.
var seedFlag = flag.Uint64("seed", 0, "TestCrashLoop: the seed of its random kills and delays (0: a new one, printed)")

// TestCrashLoop kills the real admin process with SIGKILL at random moments
// under every-second jobs and a workflow every 3 s run by real SDK
// executors, restarts it each time (twice after an outage longer than the
// misfire threshold), then checks, in the database it left, that every
// scheduled instant was run exactly once or recorded as a misfire, that no
// run was executed twice, that no run is marked FAILED, LOST or TIMED_OUT
// (every handler succeeds and no executor dies here), and that each node of
// each workflow run that succeeded ran exactly once (checkCrashWorkflow).
// It prints its seed: -seed N (or
// CARILLON_CRASHLOOP_SEED=N) replays it.
func TestCrashLoop(t *testing.T) {
	testkit.Soak(t, "kills an admin process 22 times: about 90 s")
	seed, rng := seededRand(t)
	ctx := context.Background()
	dir := t.TempDir()
	a := &crashAdmin{t: t, db: filepath.Join(dir, "carillon.db"), log: filepath.Join(dir, "admin.log"), addr: freeAddr(t)}
	a.start()
	defer a.kill()
	mc := a.login(ctx)

	ex := &executions{byRun: map[int64]int{}, byFire: map[string]int{}}
	for range 3 {
		startCrashExecutor(t, []string{a.url()}, ex, rng.Uint64())
	}
	g, err := mc.group.CreateGroup(ctx, &carillonv1.CreateGroupRequest{Group: &carillonv1.Group{AppName: "crash"}})
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, 20*time.Second, "three executors registered", func() (bool, error) {
		res, err := mc.group.GetGroup(ctx, &carillonv1.GetGroupRequest{Id: g.Group.Id})
		return err == nil && len(res.Group.Addresses) == 3, err
	})
	routes := []carillonv1.RouteStrategy{carillonv1.RouteStrategy_ROUTE_STRATEGY_FIRST, carillonv1.RouteStrategy_ROUTE_STRATEGY_ROUND_ROBIN,
		carillonv1.RouteStrategy_ROUTE_STRATEGY_RANDOM, carillonv1.RouteStrategy_ROUTE_STRATEGY_LEAST_RECENTLY_USED}
	var jobIDs []int64
	for i := range crashJobs {
		misfire := carillonv1.MisfireStrategy_MISFIRE_STRATEGY_DO_NOTHING
		if i >= crashJobs-2 {
			misfire = carillonv1.MisfireStrategy_MISFIRE_STRATEGY_FIRE_ONCE_NOW
		}
		j, err := mc.job.CreateJob(ctx, &carillonv1.CreateJobRequest{Job: &carillonv1.Job{
			GroupId: g.Group.Id, Description: fmt.Sprint("every second ", i), Handler: "work", Enabled: true,
			Schedule:      &carillonv1.Schedule{Type: carillonv1.ScheduleType_SCHEDULE_TYPE_CRON, Cron: "* * * * * ?", TimeZone: "UTC"},
			RouteStrategy: routes[i%len(routes)], MisfireStrategy: misfire,
		}})
		if err != nil {
			t.Fatal(err)
		}
		jobIDs = append(jobIDs, j.Job.Id)
	}
	wf := createCrashWorkflow(t, mc, g.Group.Id)

	// The crash loop: up 0.3 to 3 s, killed, down up to 1 s (twice 7 s,
	// longer than the 5 s misfire threshold), restarted on the same file.
	for i := range crashes {
		time.Sleep(300*time.Millisecond + time.Duration(rng.Int64N(int64(2700*time.Millisecond))))
		a.kill()
		down := time.Duration(rng.Int64N(int64(time.Second)))
		if i == 6 || i == 15 {
			down = 7 * time.Second
		}
		time.Sleep(down)
		a.start()
	}
	time.Sleep(8 * time.Second) // the last restart's reconciliation, and a few quiet seconds

	// Stop the jobs and the workflow, wait for every run to settle, stop
	// the admin cleanly.
	wf.stop(t, mc)
	stopAt := mc.settle(t, jobIDs, 60*time.Second)
	a.stop()
	d, err := sql.Open("sqlite", "file:"+a.db+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	checkCrashLoop(t, seed, crashes, d, ex, stopAt.Add(-time.Second))
	checkCrashWorkflow(t, seed, d, ex, wf)
}

// crashAdmin is the admin process of TestCrashLoop.
type crashAdmin struct {
	t         *testing.T
	db, log   string
	addr      string
	env       []string // more of its environment
	cmd       *exec.Cmd
	exited    chan struct{}
	restarts  int
	logFrom   int64     // the log's size when this start began
	startedAt time.Time // when this start began to answer
}

func (a *crashAdmin) url() string { return "http://" + a.addr }

// start starts the admin and waits until it answers.
func (a *crashAdmin) start() {
	a.t.Helper()
	logf, err := os.OpenFile(a.log, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		a.t.Fatal(err)
	}
	if fi, err := logf.Stat(); err == nil {
		a.logFrom = fi.Size()
	}
	cmd := exec.Command(os.Args[0], "serve", "--db", a.db, "--listen", a.addr, "--token", crashToken,
		"--admin-password", crashPassword, "--log-level", "warn")
	cmd.Env = append(append(os.Environ(), "CARILLON_TEST_MAIN=1"), a.env...)
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		a.t.Fatal(err)
	}
	logf.Close()
	a.cmd, a.exited = cmd, make(chan struct{})
	go func() { _ = cmd.Wait(); close(a.exited) }() // killed: its exit status is no news
	a.restarts++
	health := carillonv1connect.NewRegistryServiceClient(http.DefaultClient, a.url())
	deadline := time.Now().Add(30 * time.Second)
	for {
		// Any answer, even unauthenticated, means the admin serves.
		_, err := health.Deregister(context.Background(), &carillonv1.DeregisterRequest{AppName: "nobody"})
		if err == nil || connect.CodeOf(err) != connect.CodeUnavailable {
			a.startedAt = time.Now()
			return
		}
		select {
		case <-a.exited:
			a.t.Fatalf("admin start %d exited: see %s", a.restarts, a.tail())
		default:
		}
		if time.Now().After(deadline) {
			a.t.Fatalf("admin start %d did not answer in 30 s: %v; log: %s", a.restarts, err, a.tail())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// kill kills the admin with SIGKILL, if it runs, and waits for it.
func (a *crashAdmin) kill() {
	if a.cmd == nil {
		return
	}
	_ = a.cmd.Process.Signal(syscall.SIGKILL) // it may have exited already
	<-a.exited
	// It must have died of the kill, not of a crash of its own before it;
	// over PostgreSQL an admin that lost its lease exits by design.
	if ws, ok := a.cmd.ProcessState.Sys().(syscall.WaitStatus); !ok || !ws.Signaled() || ws.Signal() != syscall.SIGKILL {
		if a.leaseLost() {
			a.t.Logf("admin %s start %d stopped before it was killed: its lease ran out", a.addr, a.restarts)
		} else {
			a.t.Errorf("admin start %d ended with %v before it was killed; log: %s", a.restarts, a.cmd.ProcessState, a.tail())
		}
	}
	a.cmd = nil
}

// stop stops the admin with SIGTERM and waits for it to exit cleanly.
func (a *crashAdmin) stop() {
	a.t.Helper()
	_ = a.cmd.Process.Signal(syscall.SIGTERM) // it may have exited already
	select {
	case <-a.exited:
	case <-time.After(60 * time.Second):
		a.t.Fatalf("admin did not stop in 60 s after SIGTERM; log: %s", a.tail())
	}
	if code := a.cmd.ProcessState.ExitCode(); code != 0 {
		a.t.Errorf("admin exited with %d after SIGTERM; log: %s", code, a.tail())
	}
	a.cmd = nil
}

// leaseLost reports whether the admin's last words were that its lease on
// a shared database ran out (it then exits, for a supervisor to restart).
func (a *crashAdmin) leaseLost() bool {
	b, _ := os.ReadFile(a.log)
	return int64(len(b)) >= a.logFrom && strings.Contains(string(b[a.logFrom:]), "lease on the database ran out")
}

// tail returns the end of the admin's log.
func (a *crashAdmin) tail() string {
	b, _ := os.ReadFile(a.log)
	if len(b) > 4000 {
		b = b[len(b)-4000:]
	}
	return string(b)
}

// crashClients are the management clients of TestCrashLoop.
type crashClients struct {
	token string // the session's, for more clients
	group carillonv1connect.GroupServiceClient
	job   carillonv1connect.JobServiceClient
	run   carillonv1connect.RunServiceClient
	wf    carillonv1connect.WorkflowServiceClient
}

// settle stops the jobs, waits at most timeout until no run is left
// PENDING or RUNNING and no workflow run PENDING or RUNNING, and returns
// when it stopped them.
//
// One poll reads in the order a run moves, PENDING before RUNNING, so a
// run that moves between the two reads is seen by the second; a run made
// by another's settling (a workflow's next node) is made while its
// workflow run is active, which the third read sees. A read that fails
// counts as runs left, not as none.
func (mc crashClients) settle(t *testing.T, jobIDs []int64, timeout time.Duration) time.Time {
	t.Helper()
	ctx := context.Background()
	stopAt := time.Now()
	for _, id := range jobIDs {
		if _, err := mc.job.StopJob(ctx, &carillonv1.StopJobRequest{Id: id}); err != nil {
			t.Fatal(err)
		}
	}
	var left []string
	for deadline := time.Now().Add(timeout); ; time.Sleep(100 * time.Millisecond) {
		left = left[:0]
		for _, st := range []carillonv1.RunStatus{carillonv1.RunStatus_RUN_STATUS_PENDING, carillonv1.RunStatus_RUN_STATUS_RUNNING} {
			res, err := mc.run.ListRuns(ctx, &carillonv1.ListRunsRequest{Status: st, PageSize: 10})
			if err != nil {
				left = append(left, fmt.Sprintf("list %s runs: %v", st, err))
				continue
			}
			for _, r := range res.Runs {
				left = append(left, fmt.Sprintf("run %d (job %d, %s, instant %s): %s at %q, %q / %q", r.Id, r.JobId, r.TriggerType,
					r.ScheduledAt.AsTime().UTC().Format("15:04:05.000"), r.Status, r.ExecutorAddress, r.TriggerMessage, r.Message))
			}
		}
		for _, st := range []carillonv1.WorkflowRunStatus{carillonv1.WorkflowRunStatus_WORKFLOW_RUN_STATUS_PENDING, carillonv1.WorkflowRunStatus_WORKFLOW_RUN_STATUS_RUNNING} {
			res, err := mc.wf.ListWorkflowRuns(ctx, &carillonv1.ListWorkflowRunsRequest{Status: st, PageSize: 10})
			if err != nil {
				left = append(left, fmt.Sprintf("list %s workflow runs: %v", st, err))
				continue
			}
			for _, r := range res.WorkflowRuns {
				left = append(left, fmt.Sprintf("workflow run %d (instant %s): %s, %q", r.Id,
					r.ScheduledAt.AsTime().UTC().Format("15:04:05.000"), r.Status, r.Message))
			}
		}
		if len(left) == 0 {
			return stopAt
		}
		if time.Now().After(deadline) {
			break
		}
	}
	t.Fatalf("after %s, runs left unsettled (up to 10 of each status):\n%s", timeout, strings.Join(left, "\n"))
	return stopAt
}

// login logs in as the first ADMIN; the session outlives restarts.
func (a *crashAdmin) login(ctx context.Context) crashClients {
	a.t.Helper()
	res, err := carillonv1connect.NewUserServiceClient(http.DefaultClient, a.url()).Login(ctx,
		&carillonv1.LoginRequest{Username: "admin", Password: crashPassword})
	if err != nil {
		a.t.Fatal(err)
	}
	c := client.New(http.DefaultClient, a.url(), client.WithToken(res.Token))
	return crashClients{token: res.Token, group: c.Groups, job: c.Jobs, run: c.Runs, wf: c.Workflows}
}

// executions counts what the executors ran: by run, and by fire (job,
// scheduled instant, shard), and notes when each run reached them.
type executions struct {
	mu       sync.Mutex
	byRun    map[int64]int
	byFire   map[string]int
	receipts []receipt
}

// receipt is a run as an executor received it.
type receipt struct {
	job                int64
	scheduled, reached time.Time
}

func fireKey(job int64, at time.Time, shard int) string {
	return fmt.Sprintf("%d@%d#%d", job, at.UnixMilli(), shard)
}

// startCrashExecutor starts a real SDK executor whose "work" handler
// counts each run it starts, works up to 300 ms and succeeds; its "node"
// handler, for workflow nodes, does the same but leaves no receipt.
func startCrashExecutor(t *testing.T, adminURLs []string, ex *executions, seed uint64) {
	t.Helper()
	e, err := sdk.New(sdk.Config{AdminURLs: adminURLs, AppName: "crash", AccessToken: crashToken,
		LogDir: t.TempDir(), Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	rng := rand.New(rand.NewPCG(seed, seed))
	work := func(receipts bool) sdk.HandlerFunc {
		return func(ctx context.Context, job *sdk.Job) error {
			reached := time.Now()
			ex.mu.Lock()
			if receipts {
				ex.receipts = append(ex.receipts, receipt{job: job.JobID, scheduled: job.ScheduledAt, reached: reached})
			}
			ex.byRun[job.RunID]++
			ex.byFire[fireKey(job.JobID, job.ScheduledAt, job.ShardIndex)]++
			ex.mu.Unlock()
			mu.Lock()
			d := time.Duration(rng.Int64N(int64(300 * time.Millisecond)))
			mu.Unlock()
			select {
			case <-time.After(d):
			case <-ctx.Done():
			}
			return nil
		}
	}
	e.HandleFunc("work", work(true))
	// A workflow node's run: counted, but it reaches the executor after
	// the nodes it depends on, not on its scheduled_at (no receipt).
	e.HandleFunc("node", work(false))
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- e.Serve(ctx, ln) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("executor: %v", err)
		}
	})
}

// checkCrashLoop reads the runs the admins left in the database d and
// checks them against what the executors ran, for every instant of each
// job up to end; crashes is how many kills the admins had.
func checkCrashLoop(t *testing.T, seed uint64, crashes int, d *sql.DB, ex *executions, end time.Time) {
	t.Helper()
	type run struct {
		id, job, missedCount              int64
		scheduled, missedUntil, triggered sql.NullInt64
		status, triggerType, shard        int64
		message, executor                 string
	}
	rows, err := d.Query(`SELECT id, job_id, scheduled_at, missed_until, missed_count, status, trigger_type, shard_index,
		message, executor_address, triggered_at FROM runs ORDER BY id`)
	if err != nil {
		t.Fatal(err)
	}
	var runs []run
	for rows.Next() {
		var r run
		if err := rows.Scan(&r.id, &r.job, &r.scheduled, &r.missedUntil, &r.missedCount, &r.status, &r.triggerType, &r.shard,
			&r.message, &r.executor, &r.triggered); err != nil {
			t.Fatal(err)
		}
		runs = append(runs, r)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	first := map[int64]time.Time{} // each every-second job's first instant
	jrows, err := d.Query(`SELECT id, created_at FROM jobs WHERE cron = '* * * * * ?'`)
	if err != nil {
		t.Fatal(err)
	}
	for jrows.Next() {
		var id, created int64
		if err := jrows.Scan(&id, &created); err != nil {
			t.Fatal(err)
		}
		first[id] = time.UnixMilli(created).Truncate(time.Second).Add(time.Second)
	}
	jrows.Close()

	ex.mu.Lock()
	defer ex.mu.Unlock()
	var problems []string
	problem := func(format string, args ...any) { problems = append(problems, fmt.Sprintf(format, args...)) }
	covered := map[int64]map[int64]int{} // job -> instant (unix ms) -> runs or records covering it
	cover := func(job int64, from, to time.Time) int64 {
		if covered[job] == nil {
			covered[job] = map[int64]int{}
		}
		var n int64
		for at := from; !at.After(to); at = at.Add(time.Second) {
			covered[job][at.UnixMilli()]++
			n++
		}
		return n
	}
	var executed, recorded, lost, mislabelled int
	const (
		running, succeeded, pending, skipped = 1, 2, 7, 8
		schedule, misfire                    = 1, 5
	)
	for _, r := range runs {
		at := time.UnixMilli(r.scheduled.Int64)
		runsHere := ex.byRun[r.id]
		executed += runsHere
		desc := fmt.Sprintf("run %d (job %d, instant %s, status %s, type %s, executor %q, message %q)", r.id, r.job,
			at.UTC().Format("15:04:05.000"), carillonv1.RunStatus(r.status), carillonv1.TriggerType(r.triggerType), r.executor, r.message)
		switch r.status {
		case succeeded:
			if runsHere != 1 {
				problem("%s: executed %d times, want once", desc, runsHere)
			}
		case skipped:
			if runsHere != 0 {
				problem("%s: SKIPPED but executed %d times", desc, runsHere)
			}
		case running, pending:
			problem("%s: left unsettled", desc)
		default:
			mislabelled++
			if runsHere == 0 {
				lost++
			}
			problem("%s: every handler succeeds and no executor dies here; executed %d times", desc, runsHere)
		}
		if r.triggerType != schedule && r.triggerType != misfire {
			continue
		}
		until := at
		if r.missedCount > 0 {
			until = time.UnixMilli(r.missedUntil.Int64)
		}
		if n := cover(r.job, at, until); r.missedCount > 0 {
			if !at.After(end) {
				recorded += int(r.missedCount)
			}
			if n != r.missedCount {
				problem("%s: stands for %d instants through %s, but says %d", desc, n, until.UTC().Format("15:04:05"), r.missedCount)
			}
		} else if r.status == skipped && !at.After(end) { // not a fire of a stopped job after end
			recorded++
		}
	}
	duplicated := 0
	for key, n := range ex.byFire {
		if n > 1 {
			duplicated++
			problem("fire %s executed %d times", key, n)
		}
	}
	instants := 0
	for job, from := range first {
		for at := from; !at.After(end); at = at.Add(time.Second) {
			instants++
			switch n := covered[job][at.UnixMilli()]; n {
			case 1:
			case 0:
				problem("job %d, instant %s: neither run nor recorded as a misfire", job, at.UTC().Format("15:04:05"))
			default:
				problem("job %d, instant %s: covered %d times", job, at.UTC().Format("15:04:05"), n)
			}
		}
	}
	t.Logf("seed %d: %d crashes, %d instants, %d executed, %d recorded as misfires, %d lost, %d duplicated, %d mislabelled",
		seed, crashes, instants, executed, recorded, lost, duplicated, mislabelled)
	if len(problems) > 0 {
		slices.Sort(problems)
		if len(problems) > 25 {
			problems = append(problems[:25], fmt.Sprintf("… and %d more", len(problems)-25))
		}
		t.Errorf("seed %d: %d problems:\n%s", seed, len(problems), strings.Join(problems, "\n"))
	}
}

// freeAddr returns a loopback address that was free a moment ago, on a
// port below the range the system hands out for outgoing connections: while
// the admin is down, no executor's connection can take its port.
func freeAddr(t *testing.T) string {
	t.Helper()
	low := 32768
	if b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range"); err == nil {
		if f := strings.Fields(string(b)); len(f) == 2 {
			if n, err := strconv.Atoi(f[0]); err == nil {
				low = n
			}
		}
	}
	for port := 20000 + rand.IntN(min(10000, max(low-20000, 1))); port < low; port++ {
		ln, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
		if err == nil {
			ln.Close()
			return ln.Addr().String()
		}
	}
	t.Fatalf("no free loopback port below %d", low)
	return ""
}

// waitFor polls cond every 100 ms until it holds, failing after timeout.
func waitFor(t *testing.T, timeout time.Duration, what string, cond func() (bool, error)) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		ok, err := cond()
		if ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("after %s, still not %s (last error: %v)", timeout, what, errors.Join(err))
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// seededRand returns a seed, from -seed, else CARILLON_CRASHLOOP_SEED,
// else the clock, and a random source seeded with it; it logs the seed so
// a failing run can be replayed.
func seededRand(t *testing.T) (uint64, *rand.Rand) {
	t.Helper()
	seed := *seedFlag
	if seed == 0 {
		seed = uint64(time.Now().UnixNano())
	}
	if s := os.Getenv("CARILLON_CRASHLOOP_SEED"); s != "" {
		var err error
		if seed, err = strconv.ParseUint(s, 10, 64); err != nil {
			t.Fatal(err)
		}
	}
	t.Logf("seed %d (-seed %d replays it)", seed, seed)
	return seed, rand.New(rand.NewPCG(seed, seed))
}
