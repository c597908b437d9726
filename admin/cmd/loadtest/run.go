package main

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/http"
	_ "net/http/pprof" //nolint:gosec // --pprof: the executors' side, served on the load tool's own loopback debug address
	"os"
	"path/filepath"
	"runtime"
	"time"

	"github.com/carillonhq/carillon/sdk"
)

// run sets up the admin, executors and jobs, measures the window and
// cleans up whatever it started, also on error and when ctx ends.
func run(ctx context.Context, c config) (res *result, err error) {
	cpus, model := machine()
	res = &result{
		Machine: machineInfo{CPUs: cpus, Model: model, Go: runtime.Version()},
		Setup: setupInfo{ExecutorDir: c.execDir, Jobs: c.jobs, Executors: c.executors, Schedule: c.scheduleName(), Route: c.route.String(),
			Sparse: c.sparse, SparseYearly: c.yearly, History: c.history, Warmup: c.warmup.Seconds(), Duration: c.duration.Seconds(), LogLevel: c.logLevel},
	}
	if c.pprofAddr != "" {
		ln, err := net.Listen("tcp", c.pprofAddr)
		if err != nil {
			return nil, fmt.Errorf("--pprof: %w", err)
		}
		srv := &http.Server{ReadHeaderTimeout: 5 * time.Second} // DefaultServeMux, where net/http/pprof registers
		go func() { _ = srv.Serve(ln) }()
		defer func() { _ = srv.Close() }()
		progress("pprof of this process on http://%s/debug/pprof/", ln.Addr())
	}

	dir := c.dir
	if dir == "" {
		if dir, err = os.MkdirTemp("", "carillon-loadtest-"); err != nil {
			return nil, err
		}
		if !c.keep {
			defer func() {
				if err == nil {
					_ = os.RemoveAll(dir)
				} else {
					progress("work directory kept for a look: %s", dir)
				}
			}()
		}
	} else if err := os.MkdirAll(dir, 0o755); err != nil { //nolint:gosec // a scratch directory of the load tool
		return nil, err
	}
	progress("work directory %s", dir)

	app := fmt.Sprintf("loadtest-%d-%d", os.Getpid(), time.Now().Unix()%100000)
	sparseApp := app + "-sparse"
	baseURL, pid, dbPath := c.adminURL, c.adminPID, c.dbPath
	var fl *fleet // the started admins
	password, token := c.password, c.token
	var group, sparseGroup int64
	var profile func(context.Context, time.Duration) error // --admin-pprof
	if baseURL == "" {
		dbPath = cmp.Or(c.pgURL, filepath.Join(dir, "carillon.db"))
		password, token = cmp.Or(password, randomHex(12)), cmp.Or(token, randomHex(24))
		if c.sparse > 0 {
			start := time.Now()
			progress("storing %d sparse jobs in %s", c.sparse, dbPath)
			if sparseGroup, err = seedSparse(ctx, dbPath, sparseApp, c.sparse, c.yearly); err != nil {
				return nil, fmt.Errorf("seed sparse jobs: %w", err)
			}
			res.Setup.SparseInsertSeconds = time.Since(start).Seconds()
		}
		if c.jobs > 0 && !c.viaAPI {
			start := time.Now()
			progress("storing %d jobs (%s, %s) in %s", c.jobs, c.scheduleName(), c.route, dbPath)
			if group, err = seedJobs(ctx, dbPath, app, &c); err != nil {
				return nil, fmt.Errorf("seed jobs: %w", err)
			}
			res.Setup.CreateJobsSeconds = time.Since(start).Seconds()
		}
		if c.history > 0 {
			start := time.Now()
			progress("storing %d settled runs in %s", c.history, dbPath)
			if err := seedHistory(ctx, dbPath, c.history, group, c.jobs); err != nil {
				return nil, fmt.Errorf("seed history: %w", err)
			}
			res.Setup.HistoryInsertSeconds = time.Since(start).Seconds()
		}
		bin, command, extra := c.carillon, "serve", c.adminArgs
		var first []string // admin 0's own arguments
		var pprofURL string
		if c.adminPprof != "" {
			if bin, err = os.Executable(); err != nil {
				return nil, err
			}
			port, err := freePort()
			if err != nil {
				return nil, err
			}
			if err := os.MkdirAll(c.adminPprof, 0o755); err != nil { //nolint:gosec // a scratch directory of the load tool
				return nil, err
			}
			command, first = serveAdminCommand, []string{"--pprof", fmt.Sprintf("127.0.0.1:%d", port)}
			pprofURL = fmt.Sprintf("http://127.0.0.1:%d", port)
			profile = func(ctx context.Context, d time.Duration) error { return fetchProfiles(ctx, pprofURL, c.adminPprof, d) }
		} else if bin == "" {
			progress("building carillon")
			if bin, err = buildCarillon(ctx, dir); err != nil {
				return nil, err
			}
		}
		start := time.Now()
		fl = &fleet{bin: bin, command: command, dir: dir, db: dbPath, token: token, password: password, logLevel: c.logLevel, extra: extra, first: first, env: c.adminEnv}
		defer func() {
			// After a measurement, an admin that does not stop in time
			// (overloaded, it hands its claimed fires over) is noted in
			// the report, which holds what the window measured.
			stopErr := fl.stop(15 * time.Second)
			if stopErr != nil && err != nil {
				progress("%v", stopErr) // why an admin was gone, beside the error it caused
			}
			if stopErr != nil && err == nil {
				if res == nil {
					err = stopErr
					return
				}
				progress("%v", stopErr)
				res.Setup.AdminStop = stopErr.Error()
			}
		}()
		for i := range c.admins {
			// One after another: the first migrates the database and
			// creates the first ADMIN.
			if err := fl.start(ctx, i); err != nil {
				return nil, err
			}
		}
		res.Setup.AdminStartSeconds = time.Since(start).Seconds()
		baseURL, pid = fl.procs[0].url, fl.procs[0].pid()
		res.Setup.AdminLog = fl.procs[0].logPath
		for _, a := range fl.procs {
			progress("admin pid %d serving on %s (log %s)", a.pid(), a.url, a.logPath)
		}
	}
	res.Setup.AdminURL = baseURL

	a := newAPI(baseURL)
	a.use(c.apiToken)
	if a.token == "" && password != "" {
		loggedIn, err := a.login(ctx, c.user, password)
		if err != nil {
			return nil, err
		}
		res.Setup.Auth = map[bool]string{true: "session of " + c.user, false: "none (the admin has no UserService)"}[loggedIn]
	}
	if token == "" {
		if token, err = a.executorToken(ctx); err != nil {
			return nil, err
		}
	}

	rec, sparseRec, nodeRec := &recorder{fail: c.fail}, &recorder{}, &nodeRecorder{}
	var startHandling func(app string, group int64, n int, handle func(*sdk.Executor)) error
	var stops []*executors
	defer func() {
		for _, ex := range stops {
			if stopErr := ex.stop(); stopErr != nil && err == nil {
				err = fmt.Errorf("executors: %w", stopErr)
			}
		}
	}()
	execDir := dir
	if c.execDir != "" {
		if execDir, err = os.MkdirTemp(c.execDir, "carillon-loadtest-executors-"); err != nil {
			return nil, err
		}
		defer func() { _ = os.RemoveAll(execDir) }()
	}
	start := func(app string, group int64, n int, rec *recorder) error {
		return startHandling(app, group, n, func(e *sdk.Executor) { e.HandleFunc(handlerName, rec.handle) })
	}
	startHandling = func(app string, group int64, n int, handle func(*sdk.Executor)) error {
		urls := []string{baseURL}
		if fl != nil {
			urls = fl.urls()
		}
		ex, err := startExecutors(ctx, n, urls, app, token, execDir, handle)
		if err != nil {
			return err
		}
		stops = append(stops, ex)
		return waitRegistered(ctx, a, group, n, 30*time.Second)
	}
	if c.sparse > 0 {
		if err := start(sparseApp, sparseGroup, 1, sparseRec); err != nil {
			return nil, err
		}
	}
	if c.jobs > 0 && !c.viaAPI {
		if err := start(app, group, c.executors, rec); err != nil {
			return nil, err
		}
	}
	if c.jobs > 0 && c.viaAPI {
		if group, err = createGroup(ctx, a, app); err != nil {
			return nil, err
		}
		if err := start(app, group, c.executors, rec); err != nil {
			return nil, err
		}
		t := time.Now()
		progress("creating %d jobs (%s, %s)", c.jobs, c.scheduleName(), c.route)
		if err := createJobs(ctx, a, &c, group, c.jobs); err != nil {
			return nil, err
		}
		res.Setup.CreateJobsSeconds = time.Since(t).Seconds()
	}

	var wl *workflowLoad
	if c.workflows > 0 {
		wfGroup, err := createGroup(ctx, a, app+"-wf")
		if err != nil {
			return nil, err
		}
		if err := startHandling(app+"-wf", wfGroup, c.executors, func(e *sdk.Executor) { e.HandleFunc(nodeHandlerName, nodeRec.handle) }); err != nil {
			return nil, err
		}
		progress("creating %d workflows of %d nodes (%s)", c.workflows, c.workflowNodes, c.workflowCron)
		if wl, err = createWorkflows(ctx, a, &c, wfGroup); err != nil {
			return nil, err
		}
	}

	progress("warming up for %s", c.warmup)
	if err := sleep(ctx, c.warmup); err != nil {
		return nil, err
	}
	var rd *readers
	if c.readers > 0 {
		progress("starting %d reading clients", c.readers)
		rd = startReaders(ctx, c.readers, baseURL, a.token)
	}
	pids := []int{pid}
	var ch *chaos
	if fl != nil {
		pids = fl.pids()
		if c.chaosMin > 0 {
			ch = &chaos{fleet: fl, min: c.chaosMin, max: c.chaosMax}
		}
	}
	w, err := measure(ctx, &c, a, pids, group, rec, sparseRec, profile, ch)
	if rd != nil {
		res.Readers = rd.stop()
		res.Readers.Clients = c.readers
	}
	if err != nil {
		return nil, err
	}
	if dbPath != "" && group != 0 {
		if w.claimed, err = claimLateness(ctx, dbPath, w.start, w.end); err != nil {
			progress("%v", err)
		}
	}
	if dbPath != "" && group != 0 {
		if w.misfires, err = misfireRecords(ctx, dbPath, w.start, w.end); err != nil {
			progress("%v", err)
		}
		if w.stored, err = storedRuns(ctx, dbPath, w.start, w.end); err != nil {
			progress("%v", err)
		}
	}
	res.fill(&c, w)
	if wl != nil {
		want, runs, err := wl.expectedNodes(ctx, a, w.start, w.end)
		if err != nil {
			return nil, err
		}
		if err := awaitNodes(ctx, nodeRec, want, time.Now().Add(c.grace)); err != nil {
			return nil, err
		}
		res.Workflows = wl.measure(want, runs, nodeRec.snapshot(), c.duration.Minutes())
	}
	res.Resources.DBBytes = dbSize(ctx, dbPath)
	if fl != nil {
		res.Setup.Admins = c.admins
		res.Setup.Database = map[bool]string{true: "PostgreSQL", false: "SQLite"}[c.pgURL != ""]
	}
	return res, nil
}

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return errors.New("interrupted")
	case <-t.C:
		return nil
	}
}

func sleepUntil(ctx context.Context, t time.Time) error { return sleep(ctx, time.Until(t)) }

func randomHex(n int) string {
	b := make([]byte, n)
	rand.Read(b)
	return hex.EncodeToString(b)
}

// progress tells the person waiting what is going on, on stderr.
func progress(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "loadtest: "+format+"\n", args...)
}
