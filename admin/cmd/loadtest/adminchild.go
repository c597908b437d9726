package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
	"os"
	"os/signal"
	"runtime"
	"strconv"
	"syscall"
	"time"

	"github.com/carillonhq/carillon/admin"
	"github.com/carillonhq/carillon/admin/internal/store"
)

// serveAdminCommand is the hidden subcommand that runs the admin in this
// binary, for --admin-pprof: the same admin.Run as "carillon serve", in a
// child process of its own, plus net/http/pprof on a second loopback port
// and block and mutex profiling.
const serveAdminCommand = "serve-admin"

// serveAdmin runs the admin until SIGINT or SIGTERM. It takes the
// "carillon serve" flags the load tool passes, and --pprof.
func serveAdmin(args []string) error {
	fs := flag.NewFlagSet(serveAdminCommand, flag.ContinueOnError)
	var cfg admin.Config
	fs.StringVar(&cfg.Listen, "listen", "", "")
	fs.StringVar(&cfg.DBPath, "db", "", "")
	fs.StringVar(&cfg.Token, "token", "", "")
	fs.Int64Var(&cfg.FiresPerAdmin, "fires-per-admin", firesPerAdmin(), "")
	logLevel := fs.String("log-level", "info", "")
	pprofAddr := fs.String("pprof", "", "")
	if err := fs.Parse(args); err != nil {
		return err
	}
	var level slog.Level
	if err := level.UnmarshalText([]byte(*logLevel)); err != nil {
		return fmt.Errorf("--log-level: %w", err)
	}
	cfg.Logger = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: level}))
	cfg.Console = io.Discard
	cfg.AdminPassword = os.Getenv("CARILLON_ADMIN_PASSWORD")

	runtime.SetBlockProfileRate(int(10 * time.Microsecond))
	runtime.SetMutexProfileFraction(10)
	ln, err := net.Listen("tcp", *pprofAddr)
	if err != nil {
		return fmt.Errorf("--pprof: %w", err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	defer func() { _ = srv.Close() }()

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	return admin.Run(ctx, cfg)
}

// firesPerAdmin is what "carillon serve" takes for --fires-per-admin
// without the flag: CARILLON_FIRES_PER_ADMIN (--admin-env), else its
// default. Without it, admins sharing PostgreSQL would split every load
// between them, unlike those the tool starts from a carillon binary.
func firesPerAdmin() int64 {
	if n, err := strconv.ParseInt(os.Getenv("CARILLON_FIRES_PER_ADMIN"), 10, 64); err == nil {
		return n
	}
	return store.FiresPerAdminDefault
}

// fetchProfiles saves the admin's CPU profile over d, then a 2-second
// execution trace and its block, mutex, heap and goroutine profiles, as
// admin-*.pprof and admin.trace in dir.
func fetchProfiles(ctx context.Context, pprofURL, dir string, d time.Duration) error {
	get := func(path, file string) error {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, pprofURL+path, nil)
		if err != nil {
			return err
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			return fmt.Errorf("profile %s: %w", path, err)
		}
		defer res.Body.Close()
		if res.StatusCode != http.StatusOK {
			return fmt.Errorf("profile %s: %s", path, res.Status)
		}
		f, err := os.Create(file)
		if err != nil {
			return err
		}
		_, err = io.Copy(f, res.Body)
		return errors.Join(err, f.Close())
	}
	join := func(name string) string { return dir + string(os.PathSeparator) + name }
	errs := []error{get(fmt.Sprintf("/debug/pprof/profile?seconds=%d", max(int(d.Seconds()), 1)), join("admin-cpu.pprof"))}
	errs = append(errs, get("/debug/pprof/trace?seconds=2", join("admin.trace")))
	for _, p := range []string{"block", "mutex", "heap", "goroutine"} {
		errs = append(errs, get("/debug/pprof/"+p, join("admin-"+p+".pprof")))
	}
	return errors.Join(errs...)
}
