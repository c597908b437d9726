// Command loadtest measures a Carillon admin under load: fire lateness,
// missed and duplicated fires, throughput, and the admin's CPU, memory and
// database size. Run it from the repository:
//
//	go run ./admin/cmd/loadtest                                  # 1,000 jobs every second, 2 executors, 60 s
//	go run ./admin/cmd/loadtest --jobs 10000 --executors 4        # 10,000 fires/s
//	go run ./admin/cmd/loadtest --jobs 1000 --fix-rate 1          # FIX_RATE 1 s: fires spread over each second
//	go run ./admin/cmd/loadtest --sparse 1000000                  # 1,000,000 daily jobs, idle admin for 30 s
//	go run ./admin/cmd/loadtest --jobs 3 --cron '0/10 * * * * ?'  # an idle admin with a few jobs
//	go run ./admin/cmd/loadtest --admins 3 --db postgres://… --chaos 5-10s --duration 5m
//	                                        # three admins on PostgreSQL, one killed every 5-10 s
//
// By default it builds the carillon binary (or takes --carillon), stores the
// jobs (and the --sparse ones) in a fresh database in a temporary directory
// with the same columns CreateJob writes (admin/store's CreateJobs: creating
// thousands of jobs through the API while the first ones already fire takes
// minutes; --via-api does it anyway), then starts the admin on it as a child
// process on loopback, with a known executor token and first-ADMIN
// password, and logs in (an admin without UserService is used without
// credentials). With --admin it uses a running admin instead and creates
// the jobs through the API (--api-token or --user and --password for the
// management API, --token for executors, --admin-pid and --db for the
// resource figures).
//
// In its own process it runs --executors executors with the real SDK on
// 127.0.0.1, each with a no-op handler that records the job, the scheduled
// instant and the time the run reached the handler. Once they registered it
// lets the jobs run for --warmup, then measures for --duration: the fires whose
// scheduled instant is in the window, how late each reached an executor,
// which expected instants never arrived (after waiting up to --grace) and
// which arrived twice. It prints a summary, or JSON with --json, and stops
// the executors and the admin on exit, on error and on Ctrl-C.
//
// --admins N starts N admins over one PostgreSQL database (--db
// postgres://..., an existing database the tool adds its group and jobs to)
// and gives the executors all their URLs. --chaos MIN-MAX kills a random
// one with SIGKILL every MIN to MAX during the window and starts it again at
// once (and starts again any that exits by itself, as a supervisor would);
// the summary then adds, per kill, how late the latest fire due from 1 s
// before to 3 s after it arrived (its failover gap), and the lateness of
// the fires due outside those windows. With a started admin the missed
// fires are looked up in the database: recorded as misfires, or neither
// run nor recorded.
//
// To see where the admin's time goes, --perf FILE records the carillon
// process with perf(1) during the window, and --admin-pprof DIR runs the
// admin from this binary instead (admin.Run, as carillon serve does, in a
// child process) with net/http/pprof (with --admins, every admin runs from
// this binary and the first is profiled), and saves its CPU profile over the
// window, a 2-second execution trace and its block, mutex, heap and
// goroutine profiles into DIR, for go tool pprof -top DIR/admin-cpu.pprof.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	if len(os.Args) > 1 && os.Args[1] == serveAdminCommand {
		if err := serveAdmin(os.Args[2:]); err != nil {
			fmt.Fprintln(os.Stderr, "loadtest "+serveAdminCommand+":", err)
			os.Exit(1)
		}
		return
	}
	cfg, err := parseFlags(os.Args[1:])
	if err != nil {
		fmt.Fprintln(os.Stderr, "loadtest:", err)
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	res, err := run(ctx, cfg)
	if err != nil {
		fmt.Fprintln(os.Stderr, "loadtest:", err)
		os.Exit(1)
	}
	if err := res.print(os.Stdout, cfg.jsonOut); err != nil {
		fmt.Fprintln(os.Stderr, "loadtest:", err)
		os.Exit(1)
	}
}
