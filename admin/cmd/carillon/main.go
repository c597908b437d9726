// Command carillon is Carillon's admin, a job scheduler over an embedded
// SQLite database serving the Connect API on one port, and the admin's
// command-line client.
//
// Usage:
//
//	carillon serve [flags]            run the admin
//	carillon migrate --from F --to U  copy a SQLite database into a new PostgreSQL one
//	carillon login --user NAME        log in to an admin; later commands use the session
//	carillon COMMAND [flags] [args]   group, job, run, user, token, audit, ... (carillon --help)
//
// Every serve flag has an environment variable and a config file
// equivalent, named in its help. Client commands exit 0 on success and
// with a code per kind of failure (carillon --help lists them).
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"
	_ "time/tzdata" // named time zones work on hosts without zoneinfo
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	code := run(ctx, os.Args[1:], stdio{in: os.Stdin, out: os.Stdout, err: os.Stderr}, procEnv{})
	stop()
	os.Exit(code)
}
