package report

import (
	"io"
	"log/slog"
	"testing"
	"time"

	carillonv1 "github.com/carillonhq/carillon/proto/carillon/v1"
)

// BenchmarkSpool measures spooling a result and, once per batch of 100,
// acknowledging the batch, as the reporter does.
func BenchmarkSpool(b *testing.B) {
	sp, err := OpenSpool(b.TempDir(), slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		b.Fatal(err)
	}
	defer sp.Close()
	at := time.Now()
	batch := make([]Key, 0, reportBatchMax)
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		id := int64(i + 1)
		if err := sp.put(NewResult(id, carillonv1.RunStatus_RUN_STATUS_SUCCEEDED, "", at)); err != nil {
			b.Fatal(err)
		}
		if batch = append(batch, Key{ID: id}); len(batch) == reportBatchMax {
			if err := sp.ack(batch); err != nil {
				b.Fatal(err)
			}
			batch = batch[:0]
		}
	}
}

// BenchmarkSpoolBacklog measures delivering a backlog of 200,000 spooled
// results as the reporter does once they no longer fit in memory: load
// the oldest reportMemMax, acknowledge them, load the next. A result's
// share is reported.
func BenchmarkSpoolBacklog(b *testing.B) {
	const backlog = 200_000
	at := time.Now()
	rs := make([]Result, 1000)
	for range b.N {
		b.StopTimer()
		sp, err := OpenSpool(b.TempDir(), slog.New(slog.NewTextHandler(io.Discard, nil)))
		if err != nil {
			b.Fatal(err)
		}
		for id := int64(1); id <= backlog; id += int64(len(rs)) {
			for k := range rs {
				rs[k] = NewResult(id+int64(k), carillonv1.RunStatus_RUN_STATUS_SUCCEEDED, "", at)
			}
			if err := sp.putAll(rs); err != nil {
				b.Fatal(err)
			}
		}
		b.StartTimer()
		n := 0
		for {
			got, more, err := sp.load(reportMemMax, func(Key) bool { return false })
			if err != nil {
				b.Fatal(err)
			}
			keys := make([]Key, len(got))
			for i, r := range got {
				keys[i] = r.key()
			}
			if err := sp.ack(keys); err != nil {
				b.Fatal(err)
			}
			if n += len(got); !more {
				break
			}
		}
		if n != backlog {
			b.Fatalf("delivered %d, want %d", n, backlog)
		}
		b.StopTimer()
		sp.Close()
		b.StartTimer()
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*backlog), "ns/result")
}
