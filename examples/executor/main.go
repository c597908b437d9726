// Command executor is an example Carillon executor with a few handlers:
//
//	hello   logs a greeting and succeeds
//	fail    fails when its param is "fail", succeeds otherwise
//	sleep   sleeps for its param, a Go duration such as "30s", or until killed
//
// Run it next to an admin:
//
//	go run ./examples/executor --admin http://127.0.0.1:8080 --app example
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/carillonhq/carillon/sdk"
)

func main() {
	err := run(os.Args[1:], os.Stderr)
	switch {
	case errors.Is(err, flag.ErrHelp):
	case err != nil:
		fmt.Fprintln(os.Stderr, "executor:", err)
		os.Exit(1)
	}
}

// run runs the executor with the command line args; --help and flag errors
// go to stderr.
func run(args []string, stderr io.Writer) error {
	fs := flag.NewFlagSet("executor", flag.ContinueOnError)
	fs.SetOutput(stderr)
	admin := fs.String("admin", "http://127.0.0.1:8080", "admin base URLs, comma-separated, tried in order")
	app := fs.String("app", "example", "app name of the executor group")
	listen := fs.String("listen", "127.0.0.1:9999", "address to listen on")
	// No secret as a flag's default: --help would print it.
	token := fs.String("token", "", "executor access token shared with the admin, which an ADMIN reads with: carillon executor-token (default: $CARILLON_TOKEN)")
	advertise := fs.String("advertise", "", "URL the admin calls back (default: derived from --listen)")
	logDir := fs.String("log-dir", "", "directory for run logs and undelivered results (default: the user cache dir)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *token == "" {
		*token = os.Getenv("CARILLON_TOKEN")
	}

	ex, err := sdk.New(sdk.Config{
		AdminURLs:    strings.Split(*admin, ","),
		AppName:      *app,
		Listen:       *listen,
		AccessToken:  *token,
		AdvertiseURL: *advertise,
		LogDir:       *logDir,
	})
	if err != nil {
		return err
	}
	ex.HandleFunc("hello", hello)
	ex.HandleFunc("fail", fail)
	ex.HandleFunc("sleep", sleep)

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	slog.Info("executor starting", "app", *app, "listen", *listen, "admin", *admin)
	return ex.Run(ctx)
}

func hello(ctx context.Context, job *sdk.Job) error {
	name := job.Param
	if name == "" {
		name = "world"
	}
	job.Logf("hello, %s (run %d of job %d, shard %d of %d, 0-based)", name, job.RunID, job.JobID, job.ShardIndex, job.ShardTotal)
	return nil
}

func fail(ctx context.Context, job *sdk.Job) error {
	if job.Param == "fail" {
		job.Logf("failing, as asked")
		return errors.New("asked to fail")
	}
	job.Logf("not asked to fail (param %q)", job.Param)
	return nil
}

func sleep(ctx context.Context, job *sdk.Job) error {
	d := 10 * time.Second
	if job.Param != "" {
		var err error
		if d, err = time.ParseDuration(job.Param); err != nil {
			return fmt.Errorf("param %q is not a duration: %w", job.Param, err)
		}
	}
	job.Logger().Info("sleeping", "for", d)
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		job.Logf("woke up after %s", d)
		return nil
	case <-ctx.Done():
		return context.Cause(ctx)
	}
}
