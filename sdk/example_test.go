package sdk_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"log/slog"
	"net"
	"net/http"
	"os"
	"time"

	carillonv1 "github.com/carillonhq/carillon/proto/carillon/v1"
	"github.com/carillonhq/carillon/proto/carillon/v1/carillonv1connect"
	"github.com/carillonhq/carillon/sdk"
)

// invoiceSender is a Handler with state.
type invoiceSender struct {
	sent []string
}

func (s *invoiceSender) ServeJob(ctx context.Context, job *sdk.Job) error {
	if job.Param == "" {
		return errors.New("no invoice number in the param")
	}
	s.sent = append(s.sent, job.Param)
	job.Logf("sent invoice %s", job.Param)
	return nil
}

func ExampleExecutor_Handle() {
	ex, err := sdk.New(sdk.Config{
		AdminURLs: []string{"http://127.0.0.1:8080"},
		AppName:   "billing",
	})
	if err != nil {
		log.Fatal(err)
	}
	sender := &invoiceSender{}
	ex.Handle("invoice.send", sender)

	// A handler is a plain value: a unit test can call it directly. A Job
	// made by hand discards its log.
	fmt.Println(sender.ServeJob(context.Background(), &sdk.Job{Param: "INV-7"}))
	fmt.Println(sender.ServeJob(context.Background(), &sdk.Job{}))
	fmt.Println(sender.sent)
	// Output:
	// <nil>
	// no invoice number in the param
	// [INV-7]
}

func ExampleExecutor_HandleFunc() {
	ex, err := sdk.New(sdk.Config{
		AdminURLs: []string{"http://127.0.0.1:8080"},
		AppName:   "billing",
	})
	if err != nil {
		log.Fatal(err)
	}
	ex.HandleFunc("report.daily", func(ctx context.Context, job *sdk.Job) error {
		job.Logf("building the report for shard %d of %d (0-based)", job.ShardIndex, job.ShardTotal)
		return nil
	})

	// Registering a name twice is a programming error, like in net/http.
	defer func() { fmt.Println("panic:", recover() != nil) }()
	ex.HandleFunc("report.daily", func(ctx context.Context, job *sdk.Job) error { return nil })
	// Output:
	// panic: true
}

// exampleExecutor serves ex on a loopback port for the examples below and
// returns a client of its ExecutorService, which plays the admin, and a
// function that stops it and returns what Serve returned.
func exampleExecutor(ex *sdk.Executor) (carillonv1connect.ExecutorServiceClient, func() error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		log.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- ex.Serve(ctx, ln) }()
	client := carillonv1connect.NewExecutorServiceClient(http.DefaultClient, "http://"+ln.Addr().String())
	return client, func() error {
		cancel()
		return <-done
	}
}

// exampleConfig is a Config for an executor without an admin, with its logs
// in a temporary directory and a stopped clock.
func exampleConfig() sdk.Config {
	dir, err := os.MkdirTemp("", "carillon-example-")
	if err != nil {
		log.Fatal(err)
	}
	return sdk.Config{
		AdminURLs: []string{"http://127.0.0.1:1"}, // nobody: results wait on disk
		AppName:   "example",
		LogDir:    dir,
		Logger:    slog.New(slog.DiscardHandler),
		NowFunc:   func() time.Time { return time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC) },
	}
}

func ExampleJob_Logf() {
	cfg := exampleConfig()
	defer os.RemoveAll(cfg.LogDir)
	ex, err := sdk.New(cfg)
	if err != nil {
		log.Fatal(err)
	}
	ex.HandleFunc("greet", func(ctx context.Context, job *sdk.Job) error {
		job.Logf("hello, %s", job.Param)
		job.Logger().Info("greeted", "shard", job.ShardIndex)
		return nil
	})
	admin, stop := exampleExecutor(ex)
	defer stop()

	// What the admin does: start a run, then read its log until it ends.
	ctx := context.Background()
	if _, err := admin.Run(ctx, &carillonv1.RunRequest{RunId: 1, JobId: 7, Handler: "greet", Param: "ada", ShardTotal: 1}); err != nil {
		log.Fatal(err)
	}
	for {
		page, err := admin.ReadLog(ctx, &carillonv1.ReadLogRequest{RunId: 1, FromLine: 1})
		if err != nil {
			log.Fatal(err)
		}
		if page.GetEnd() {
			fmt.Print(page.GetContent())
			break
		}
		time.Sleep(10 * time.Millisecond) // to the admin the executor is another process: it polls
	}
	// Output:
	// 2026-05-01 12:00:00.000 run 1 of job 7 accepted: handler "greet", param "ada", shard 0 of 1 (0-based), block strategy SERIAL, timeout none
	// 2026-05-01 12:00:00.000 ----- run 1 started
	// 2026-05-01 12:00:00.000 hello, ada
	// 2026-05-01 12:00:00.000 level=INFO msg=greeted shard=0
	// 2026-05-01 12:00:00.000 ----- run 1 ended: SUCCEEDED
}

func ExampleExecutor_Serve_shutdown() {
	cfg := exampleConfig()
	defer os.RemoveAll(cfg.LogDir)
	cfg.ShutdownTimeout = 100 * time.Millisecond
	ex, err := sdk.New(cfg)
	if err != nil {
		log.Fatal(err)
	}
	started := make(chan struct{})
	ex.HandleFunc("long", func(ctx context.Context, job *sdk.Job) error {
		close(started)
		<-ctx.Done() // a long job watches its context
		fmt.Println("handler stopped:", context.Cause(ctx))
		return ctx.Err()
	})
	admin, stop := exampleExecutor(ex)

	if _, err := admin.Run(context.Background(), &carillonv1.RunRequest{RunId: 1, JobId: 1, Handler: "long", ShardTotal: 1}); err != nil {
		log.Fatal(err)
	}
	<-started
	// Cancel Serve's context, as signal.NotifyContext does on SIGTERM: the
	// executor stops taking runs, deregisters, gives running runs
	// ShutdownTimeout to finish, then cancels them.
	fmt.Println("Serve returned:", stop())
	// Output:
	// handler stopped: sdk: executor shutting down
	// Serve returned: <nil>
}
