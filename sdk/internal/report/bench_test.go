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
