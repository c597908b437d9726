package main

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"syscall"
	"time"
)

// fleet is the admins the tool started, over one database. Admin i keeps
// its address across restarts, so the executors' list stays right.
type fleet struct {
	bin, command, dir, db     string
	token, password, logLevel string
	extra                     []string
	first                     []string // extra arguments of admin 0 alone (--admin-pprof's listener)
	env                       []string // extra environment of the admins (--admin-env)
	mu                        sync.Mutex
	procs                     []*adminProc
}

// start starts admin i (again, on its address, when it ran before) and
// waits until it serves.
func (f *fleet) start(ctx context.Context, i int) error {
	f.mu.Lock()
	addr := ""
	if i < len(f.procs) {
		addr = f.procs[i].addr
	}
	f.mu.Unlock()
	log := "admin.log"
	if i > 0 {
		log = fmt.Sprintf("admin%d.log", i)
	}
	extra := f.extra
	if i == 0 {
		extra = append(slices.Clip(extra), f.first...)
	}
	a, err := startAdmin(f.bin, f.command, addr, f.dir, log, f.db, f.token, f.password, f.logLevel, extra, f.env)
	if err != nil {
		return err
	}
	f.mu.Lock()
	if i < len(f.procs) {
		f.procs[i] = a
	} else {
		f.procs = append(f.procs, a)
	}
	f.mu.Unlock()
	return a.waitReady(ctx, 2*time.Minute)
}

// urls are the admins' URLs, in order.
func (f *fleet) urls() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []string
	for _, a := range f.procs {
		out = append(out, a.url)
	}
	return out
}

// pids are the admins' process ids now.
func (f *fleet) pids() []int {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []int
	for _, a := range f.procs {
		out = append(out, a.pid())
	}
	return out
}

// proc returns admin i's current process.
func (f *fleet) proc(i int) *adminProc {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.procs[i]
}

// stop stops every admin (SIGTERM, then SIGKILL after timeout).
func (f *fleet) stop(timeout time.Duration) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	var errs []error
	for _, a := range f.procs {
		errs = append(errs, a.stop(timeout))
	}
	return errors.Join(errs...)
}

// chaos kills a random admin of the fleet with SIGKILL every min to max and
// starts it again at once; as a supervisor would, it also starts again an
// admin that exited by itself (one whose lease on the database ran out).
type chaos struct {
	fleet    *fleet
	min, max time.Duration

	kills []time.Time // when each kill was sent
	exits int         // admins that exited by themselves
	err   error       // a restart that failed, which ends the chaos
	done  chan struct{}
}

// run kills and restarts until until, then returns once every admin
// serves again. It runs in its own goroutine; done is closed at its end.
func (ch *chaos) run(ctx context.Context, until time.Time) {
	defer close(ch.done)
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 19)) //nolint:gosec // which admin to kill, not a secret
	pause := func() time.Duration { return ch.min + time.Duration(rng.Int64N(int64(ch.max-ch.min)+1)) }
	next := time.Now().Add(pause())
	n := len(ch.fleet.urls())
	for ctx.Err() == nil && time.Now().Before(until) {
		for i := range n {
			select {
			case <-ch.fleet.proc(i).exited:
				ch.exits++
				progress("admin %d exited by itself (%v); starting it again", i, ch.fleet.proc(i).err)
				if ch.err = ch.fleet.start(ctx, i); ch.err != nil {
					return
				}
			default:
			}
		}
		if now := time.Now(); !now.Before(next) && next.Before(until) {
			i := rng.IntN(n)
			a := ch.fleet.proc(i)
			ch.kills = append(ch.kills, now)
			_ = a.cmd.Process.Signal(syscall.SIGKILL) // it may have exited meanwhile
			<-a.exited
			if ch.err = ch.fleet.start(ctx, i); ch.err != nil {
				return
			}
			progress("killed admin %d (SIGKILL) at %s; started again in %s", i, now.Format("15:04:05.000"), time.Since(now).Round(time.Millisecond))
			next = time.Now().Add(pause())
		}
		select {
		case <-ctx.Done():
		case <-time.After(100 * time.Millisecond):
		}
	}
}
