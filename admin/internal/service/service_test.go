package service_test

import (
	"context"
	"errors"
	"slices"
	"testing"
	"testing/synctest"
	"time"

	"github.com/carillonhq/carillon/admin/internal/service"
)

// recorder is a service that notes its starts and stops in a shared log.
type recorder struct {
	name     string
	log      *[]string
	startErr error
}

func (r *recorder) Start(context.Context) error {
	*r.log = append(*r.log, "start "+r.name)
	return r.startErr
}

func (r *recorder) Stop() { *r.log = append(*r.log, "stop "+r.name) }

func TestGroupOrder(t *testing.T) {
	var log []string
	g := service.NewGroup(&recorder{name: "a", log: &log}, &recorder{name: "b", log: &log}, &recorder{name: "c", log: &log})
	if err := g.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	select {
	case <-g.Done():
		t.Fatal("Done closed before Stop")
	default:
	}
	g.Stop()
	g.Stop() // idempotent
	want := []string{"start a", "start b", "start c", "stop c", "stop b", "stop a"}
	if !slices.Equal(log, want) {
		t.Errorf("log %q, want %q", log, want)
	}
	if err := g.Err(); err != nil {
		t.Errorf("Err after a clean stop = %v", err)
	}
}

func TestGroupStartFails(t *testing.T) {
	var log []string
	bad := errors.New("bad")
	g := service.NewGroup(&recorder{name: "a", log: &log}, &recorder{name: "b", log: &log},
		&recorder{name: "c", log: &log, startErr: bad}, &recorder{name: "d", log: &log})
	if err := g.Start(t.Context()); !errors.Is(err, bad) {
		t.Fatalf("Start = %v, want %v", err, bad)
	}
	want := []string{"start a", "start b", "start c", "stop b", "stop a"}
	if !slices.Equal(log, want) {
		t.Errorf("log %q, want %q", log, want)
	}
	g.Stop()
	if len(log) != len(want) {
		t.Errorf("Stop after a failed Start stopped more: %q", log)
	}
}

// TestGroupFailure: a loop that fails on its own fails the group (Done,
// Err) while the others run on until Stop, which reports the failure once.
func TestGroupFailure(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		bad := errors.New("bad")
		var log []string
		failing := service.NewLoop(func(ctx context.Context) error {
			select {
			case <-time.After(time.Second):
				return bad
			case <-ctx.Done():
				return ctx.Err()
			}
		})
		g := service.NewGroup(&recorder{name: "a", log: &log}, failing, service.NewLoop(func(ctx context.Context) error {
			<-ctx.Done()
			return ctx.Err() // no failure: asked to stop
		}))
		if err := g.Start(t.Context()); err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		<-g.Done()
		if d := time.Since(start); d != time.Second {
			t.Errorf("Done after %v, want the loop's 1s", d)
		}
		if err := g.Err(); !errors.Is(err, bad) {
			t.Errorf("Err after the failure = %v, want %v", err, bad)
		}
		if !slices.Equal(log, []string{"start a"}) {
			t.Errorf("a failure stopped members on its own: %q", log)
		}
		g.Stop()
		if err := g.Err(); err == nil || err.Error() != bad.Error() {
			t.Errorf("Err after Stop = %v, want just %v", err, bad)
		}
	})
}

func TestLoop(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ended := false
		l := service.NewLoop(func(context.Context) error { return nil })
		l.Stop() // before Start: nothing
		if err := l.Start(t.Context()); err != service.ErrStarted {
			t.Errorf("Start after Stop = %v, want ErrStarted", err)
		}

		l = service.NewLoop(func(ctx context.Context) error {
			<-ctx.Done()
			time.Sleep(time.Second) // winding down
			ended = true
			return ctx.Err()
		})
		if err := l.Start(t.Context()); err != nil {
			t.Fatal(err)
		}
		if err := l.Start(t.Context()); err != service.ErrStarted {
			t.Errorf("second Start = %v, want ErrStarted", err)
		}
		synctest.Wait()
		if ended {
			t.Fatal("the loop ended before Stop")
		}
		l.Stop()
		if !ended {
			t.Error("Stop returned before the loop's function")
		}
		l.Stop()
		if err := l.Err(); err != nil {
			t.Errorf("Err after Stop = %v, want nil", err)
		}
	})
}

// TestLoopContext: a loop also ends when its Start context does.
func TestLoopContext(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		l := service.NewLoop(func(ctx context.Context) error {
			<-ctx.Done()
			return ctx.Err()
		})
		if err := l.Start(ctx); err != nil {
			t.Fatal(err)
		}
		cancel()
		<-l.Done()
		if err := l.Err(); err != nil {
			t.Errorf("Err = %v, want nil", err)
		}
	})
}

func TestOnStop(t *testing.T) {
	calls := 0
	s := service.OnStop(func() { calls++ })
	s.Stop()
	if calls != 0 {
		t.Fatal("OnStop's function ran for a service never started")
	}
	if err := s.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	if calls != 0 {
		t.Fatal("OnStop's function ran at Start")
	}
	s.Stop()
	s.Stop()
	if calls != 1 {
		t.Errorf("OnStop's function ran %d times, want 1", calls)
	}
}
