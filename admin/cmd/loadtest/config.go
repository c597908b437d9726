package main

import (
	"errors"
	"flag"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/carillonhq/carillon/admin/internal/store"
	carillonv1 "github.com/carillonhq/carillon/proto/carillon/v1"
)

// config is what the flags say.
type config struct {
	adminURL   string   // a running admin; empty: start one
	carillon   string   // the carillon binary; empty: build it
	dir        string   // work directory; empty: a new temporary one
	execDir    string   // the executors' log directories; empty: under dir
	keep       bool     // keep the work directory
	adminArgs  []string // extra "carillon serve" arguments
	adminEnv   []string // extra environment of the started admins, KEY=VALUE
	logLevel   string   // the started admin's --log-level
	token      string   // executor token
	apiToken   string   // management credential for --admin
	user       string   // user to log in as
	password   string   // that user's password
	adminPID   int      // the --admin process, for CPU and memory
	dbPath     string   // the --admin database, for its size
	executors  int
	jobs       int
	cron       string
	fixRate    int
	route      carillonv1.RouteStrategy
	create     int  // concurrent CreateJob calls
	viaAPI     bool // create the jobs through the API even for a started admin
	sparse     int
	yearly     bool // sparse jobs fire yearly instead of daily
	duration   time.Duration
	warmup     time.Duration
	grace      time.Duration
	perfOut    string // perf record output of the admin during the window
	adminPprof string // directory for the profiles of an admin run from this binary
	pprofAddr  string // net/http/pprof of this process
	jsonOut    bool
	history    int // settled runs stored before the admin starts
	readers    int // concurrent reading clients during the window
	// workflows, workflowNodes and workflowCron: --workflows.
	workflows, workflowNodes int
	workflowCron             string
	durationOK               bool // --duration was given
	jobsOK                   bool // --jobs was given
	// seededFrom is when the jobs seedJobs stored start to fire (set by
	// it): a large seed's first fire waits for the admin's claim lead
	// (seedDelay), and no earlier instant of theirs is expected.
	seededFrom time.Time
	// admins is how many admins to start over one database: more than one
	// needs a PostgreSQL database (pgURL).
	admins int
	// pgURL is the PostgreSQL database of the started admins (--db
	// postgres://...); empty: a SQLite file in the work directory.
	pgURL string
	// fail makes the measured jobs' handler fail every run (--fail).
	fail bool
	// retries is the measured jobs' retry count (--retries).
	retries int32
	// chaosMin and chaosMax bound the time between two kills (SIGKILL) of a
	// random started admin during the window (--chaos); 0: no kills.
	chaosMin, chaosMax time.Duration
}

// stringList is a repeatable string flag.
type stringList []string

func (l *stringList) String() string     { return strings.Join(*l, " ") }
func (l *stringList) Set(s string) error { *l = append(*l, s); return nil }

func parseFlags(args []string) (config, error) {
	var c config
	fs := flag.NewFlagSet("loadtest", flag.ContinueOnError)
	fs.StringVar(&c.adminURL, "admin", "", "URL of a running admin to load; empty: start one as a child process")
	fs.StringVar(&c.carillon, "carillon", "", "carillon binary to start; empty: go build ./admin/cmd/carillon into the work directory")
	fs.StringVar(&c.dir, "dir", "", "work directory (database, logs, binary); empty: a new temporary directory")
	fs.BoolVar(&c.keep, "keep", false, "keep the work directory (a temporary one is removed on exit)")
	fs.StringVar(&c.execDir, "executor-dir", "", "directory for the executors' run logs and spooled results, e.g. on tmpfs (/dev/shm) to take the disk out; empty: the work directory; removed on exit")
	fs.Var((*stringList)(&c.adminArgs), "admin-arg", "extra argument for carillon serve (repeatable), e.g. --admin-arg=--misfire-threshold=10s")
	fs.Var((*stringList)(&c.adminEnv), "admin-env", "extra KEY=VALUE in the environment of the started admins only (repeatable), e.g. --admin-env GOMEMLIMIT=400MiB")
	fs.StringVar(&c.logLevel, "log-level", "info", "the started admin's --log-level")
	fs.StringVar(&c.token, "token", "", "executor access token; empty: a random one for a started admin, or the admin's own (UserService.GetExecutorToken) with --admin")
	fs.StringVar(&c.apiToken, "api-token", "", "management API token or session for --admin (Authorization: Bearer)")
	fs.StringVar(&c.user, "user", "admin", "user to log in as when no --api-token is given")
	fs.StringVar(&c.password, "password", "", "password of --user; empty: a random one, set as the started admin's first ADMIN password")
	fs.IntVar(&c.adminPID, "admin-pid", 0, "process id of the --admin, for its CPU and memory")
	fs.StringVar(&c.dbPath, "db", "", "database file of the --admin, for its size; or a postgres:// URL of an existing database for the started admins (the tool adds its group and jobs to it)")
	fs.IntVar(&c.admins, "admins", 1, "admins to start over one database (more than 1: --db postgres://...); executors list them all")
	chaos := fs.String("chaos", "", "kill a random started admin with SIGKILL every MIN-MAX during the window (e.g. 5-10s) and start it again at once; an admin that exits by itself is started again too")
	fs.IntVar(&c.executors, "executors", 2, "executors to run in this process")
	fs.IntVar(&c.jobs, "jobs", 1000, "jobs to create (0 with --sparse unless given)")
	fs.StringVar(&c.cron, "cron", "*/1 * * * * ?", "the jobs' Quartz cron schedule")
	fs.IntVar(&c.fixRate, "fix-rate", 0, "FIX_RATE interval in seconds instead of --cron")
	route := fs.String("route", "ROUND_ROBIN", "the jobs' route strategy, e.g. ROUND_ROBIN, FIRST, CONSISTENT_HASH")
	fs.BoolVar(&c.viaAPI, "via-api", false, "create the jobs with CreateJob calls after the admin started, instead of storing them in its database before (always so with --admin)")
	fs.IntVar(&c.create, "create-concurrency", 8, "concurrent CreateJob calls with --via-api or --admin")
	fs.IntVar(&c.sparse, "sparse", 0, "also store this many jobs with daily crons (a random second each) before starting the admin")
	fs.BoolVar(&c.yearly, "sparse-yearly", false, "give the --sparse jobs yearly crons (a random second of a random day) instead of daily ones, so that almost none fires in the window")
	fs.DurationVar(&c.duration, "duration", time.Minute, "measured window (30s with --sparse unless given)")
	fs.DurationVar(&c.warmup, "warmup", 5*time.Second, "time between the last job created and the window")
	fs.DurationVar(&c.grace, "grace", 10*time.Second, "how long after the window to wait for late fires")
	fs.StringVar(&c.perfOut, "perf", "", "record the admin with perf(1) during the window into this file; the top symbols go to FILE.txt")
	fs.StringVar(&c.adminPprof, "admin-pprof", "", "run the admins from this binary, the first with net/http/pprof, and save its profiles of the window into this directory")
	fs.StringVar(&c.pprofAddr, "pprof", "", "serve net/http/pprof of this process (the executors' side) on this loopback address")
	fs.BoolVar(&c.jsonOut, "json", false, "print the result as JSON instead of a summary")
	fs.IntVar(&c.workflows, "workflows", 0, "also create this many workflows on --workflow-cron, in a group of their own with --executors executors, and measure their runs")
	fs.IntVar(&c.workflowNodes, "workflow-nodes", 5, "nodes of each --workflows workflow: a root, up to 50 in parallel, (above 52) a join and the rest in parallel, a sink")
	fs.StringVar(&c.workflowCron, "workflow-cron", "* * * * * ?", "the --workflows workflows' Quartz cron schedule")
	fs.IntVar(&c.history, "history", 0, "store this many settled runs (the last 30 days) before starting the admin, for a large runs table")
	fs.Func("retries", "the measured jobs' retries of a failed run, each 1 s after the failure (with --fail: a workload of retries); retries are not counted as fires", func(v string) error {
		n, err := strconv.ParseInt(v, 10, 32)
		if err != nil || n < 0 {
			return fmt.Errorf("want a count of retries, not %q", v)
		}
		c.retries = int32(n)
		return nil
	})
	fs.BoolVar(&c.fail, "fail", false, "the measured jobs' handler fails every run (each failed run's alarm is then the admin's to evaluate): the cost of a failing workload")
	fs.IntVar(&c.readers, "readers", 0, "clients calling ListRuns and GetDashboard back to back during the window and grace (at most 1000)")
	if err := fs.Parse(args); err != nil {
		return c, err
	}
	if fs.NArg() > 0 {
		return c, fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	fs.Visit(func(f *flag.Flag) {
		c.durationOK = c.durationOK || f.Name == "duration"
		c.jobsOK = c.jobsOK || f.Name == "jobs"
	})
	if c.sparse > 0 && !c.durationOK {
		c.duration = 30 * time.Second
	}
	if c.sparse > 0 && !c.jobsOK {
		c.jobs = 0
	}
	c.viaAPI = c.viaAPI || c.adminURL != ""
	if c.adminURL == "" && store.IsPostgresURL(c.dbPath) {
		c.pgURL, c.dbPath = c.dbPath, ""
	}
	if *chaos != "" {
		var err error
		if c.chaosMin, c.chaosMax, err = parseRange(*chaos); err != nil {
			return c, fmt.Errorf("--chaos %q: %w", *chaos, err)
		}
	}
	v, ok := carillonv1.RouteStrategy_value["ROUTE_STRATEGY_"+strings.ToUpper(*route)]
	if !ok {
		return c, fmt.Errorf("--route %q: not a route strategy", *route)
	}
	c.route = carillonv1.RouteStrategy(v)
	return c, c.validate()
}

func (c *config) validate() error {
	switch {
	case c.executors < 1:
		return errors.New("--executors must be at least 1")
	case c.jobs < 0 || c.sparse < 0:
		return errors.New("--jobs and --sparse must not be negative")
	case c.jobs == 0 && c.sparse == 0 && c.workflows == 0:
		return errors.New("nothing to measure: --jobs, --sparse and --workflows are all 0")
	case c.fixRate < 0:
		return errors.New("--fix-rate must not be negative")
	case c.duration < time.Second || c.duration > time.Hour:
		return errors.New("--duration must be between 1s and 1h")
	case c.warmup < 0 || c.grace < 0:
		return errors.New("--warmup and --grace must not be negative")
	case c.create < 1:
		return errors.New("--create-concurrency must be at least 1")
	case c.adminURL != "" && (c.sparse > 0 || c.carillon != "" || len(c.adminArgs) > 0 || len(c.adminEnv) > 0 || c.adminPprof != ""):
		return errors.New("--sparse, --carillon, --admin-arg, --admin-env and --admin-pprof need a started admin, not --admin")
	case slices.ContainsFunc(c.adminEnv, func(kv string) bool { return !strings.Contains(kv, "=") }):
		return errors.New("--admin-env takes KEY=VALUE")
	case c.adminPprof != "" && (c.carillon != "" || len(c.adminArgs) > 0):
		return errors.New("--admin-pprof runs the admin from this binary: no --carillon or --admin-arg")
	case c.history < 0 || c.readers < 0 || c.readers > 1000:
		return errors.New("--history must not be negative; --readers must be between 0 and 1000")
	case c.adminURL != "" && c.history > 0:
		return errors.New("--history needs a started admin, not --admin")
	case c.adminURL == "" && (c.adminPID != 0 || c.dbPath != "" || c.apiToken != ""):
		return errors.New("--admin-pid, --db FILE and --api-token go with --admin (a started admin takes --db postgres://...)")
	case c.admins < 1 || c.admins > 9:
		return errors.New("--admins must be between 1 and 9")
	case c.admins > 1 && c.pgURL == "":
		return errors.New("--admins above 1 need a shared database: a postgres:// URL as --db")
	case c.adminURL != "" && (c.admins > 1 || c.chaosMin > 0):
		return errors.New("--admins and --chaos need started admins, not --admin")
	case c.pgURL != "" && c.history > 0:
		return errors.New("--history needs a SQLite database, not a postgres:// URL as --db")
	case c.workflows < 0 || c.workflows > 1000:
		return errors.New("--workflows must be between 0 and 1000")
	case c.workflowNodes < 3 || c.workflowNodes > 1000:
		return errors.New("--workflow-nodes must be between 3 and 1000")
	case c.chaosMin > 0 && c.readers > 0:
		return errors.New("--readers call one admin, which --chaos kills: not both")
	}
	return nil
}

// parseRange parses "5-10s" (or "5s-10s", "500ms-2s") into its bounds.
func parseRange(s string) (lo, hi time.Duration, err error) {
	a, b, ok := strings.Cut(s, "-")
	if !ok {
		return 0, 0, errors.New("want MIN-MAX, e.g. 5-10s")
	}
	if hi, err = time.ParseDuration(b); err != nil {
		return 0, 0, err
	}
	if lo, err = time.ParseDuration(a); err != nil {
		// "5-10s": the unit of the maximum
		unit := strings.TrimLeft(b, "0123456789.")
		if lo, err = time.ParseDuration(a + unit); err != nil {
			return 0, 0, err
		}
	}
	if lo < 100*time.Millisecond || hi < lo {
		return 0, 0, errors.New("want 100ms <= MIN <= MAX")
	}
	return lo, hi, nil
}

// schedule is the measured jobs' schedule.
func (c *config) schedule() *carillonv1.Schedule {
	if c.fixRate > 0 {
		return &carillonv1.Schedule{Type: carillonv1.ScheduleType_SCHEDULE_TYPE_FIX_RATE, IntervalSeconds: int32(c.fixRate)} //nolint:gosec // load sizes are small
	}
	return &carillonv1.Schedule{Type: carillonv1.ScheduleType_SCHEDULE_TYPE_CRON, Cron: c.cron}
}

// scheduleName describes the schedule for the report.
func (c *config) scheduleName() string {
	if c.fixRate > 0 {
		return fmt.Sprintf("FIX_RATE %ds", c.fixRate)
	}
	return "CRON " + c.cron
}
