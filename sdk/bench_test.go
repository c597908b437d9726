package sdk

import (
	"context"
	"io"
	"log/slog"
	"sync/atomic"
	"testing"
	"time"

	carillonv1 "github.com/carillonhq/carillon/proto/carillon/v1"
)

// BenchmarkAccept measures the executor's side of a dispatch: accepting a
// run (its log file, its worker) until its handler has run and its result
// was reported, for runs of many jobs, as a busy executor sees them.
//
//	go test -run '^$' -bench Accept ./sdk/
func BenchmarkAccept(b *testing.B) {
	var done atomic.Int64
	d := newDispatcher(dispatcherConfig{
		logs:         &logStore{dir: b.TempDir(), now: time.Now},
		now:          time.Now,
		logger:       slog.New(slog.NewTextHandler(io.Discard, nil)),
		report:       func(result) { done.Add(1) },
		idleTimeout:  workerIdleTimeout,
		abandonAfter: abandonAfter,
	})
	noop := HandlerFunc(func(context.Context, *Job) error { return nil })
	b.ResetTimer()
	for i := range b.N {
		r := &run{id: int64(i + 1), jobID: int64(i%1000 + 1), name: "noop", handler: noop,
			block: carillonv1.BlockStrategy_BLOCK_STRATEGY_SERIAL, shardTotal: 1}
		if err := d.accept(r); err != nil {
			b.Fatal(err)
		}
	}
	for done.Load() < int64(b.N) {
		time.Sleep(time.Millisecond)
	}
	b.StopTimer()
	d.stopAccepting()
	d.drain(context.Background())
}
