package schedule_test

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/carillonhq/carillon/admin/internal/schedule"
)

// queueSizes are the queue lengths the queue benchmarks run at: a few
// seconds of read-ahead at 1,000 and 10,000 fires per second, plus slack.
var queueSizes = []int{10_000, 100_000}

var benchT0 = time.Date(2026, 11, 23, 8, 0, 0, 0, time.UTC)

// randomEntries returns n entries at random milliseconds of the hour after
// benchT0.
func randomEntries(rng *rand.Rand, n int) []schedule.Entry {
	es := make([]schedule.Entry, n)
	for i := range es {
		es[i] = schedule.Entry{RunID: int64(i + 1), JobID: int64(i + 1), At: benchT0.Add(time.Duration(rng.IntN(3_600_000)) * time.Millisecond)}
	}
	return es
}

// BenchmarkQueuePush measures one Push of one entry into a queue that
// holds between n and 2n entries (it is rebuilt to n, off the clock, after
// every n pushes).
func BenchmarkQueuePush(b *testing.B) {
	for _, n := range queueSizes {
		b.Run(fmt.Sprintf("entries=%d", n), func(b *testing.B) {
			rng := rand.New(rand.NewPCG(1, 2))
			base := randomEntries(rng, n)
			more := randomEntries(rng, n)
			fill := func() *schedule.Queue {
				q := schedule.NewQueue()
				q.Push(base...)
				return q
			}
			q := fill()
			b.ReportAllocs()
			b.ResetTimer()
			for i := range b.N {
				if i > 0 && i%n == 0 {
					b.StopTimer()
					q = fill()
					b.StartTimer()
				}
				q.Push(more[i%n])
			}
		})
	}
}

// BenchmarkQueuePopDue measures PopDue handing out the one entry that is
// due, from a queue of n entries at distinct milliseconds (refilled to n,
// off the clock, when it runs dry, so it holds between 1 and n).
func BenchmarkQueuePopDue(b *testing.B) {
	for _, n := range queueSizes {
		b.Run(fmt.Sprintf("entries=%d", n), func(b *testing.B) {
			es := make([]schedule.Entry, n)
			for i := range es {
				es[i] = schedule.Entry{RunID: int64(i + 1), JobID: int64(i + 1), At: benchT0.Add(time.Duration(i) * time.Millisecond)}
			}
			rand.New(rand.NewPCG(3, 4)).Shuffle(n, func(i, j int) { es[i], es[j] = es[j], es[i] })
			q := schedule.NewQueue()
			q.Push(es...)
			dst := make([]schedule.Entry, 0, 8)
			b.ReportAllocs()
			b.ResetTimer()
			for i := range b.N {
				if i > 0 && i%n == 0 {
					b.StopTimer()
					q.Push(es...)
					b.StartTimer()
				}
				dst, _ = q.PopDue(dst[:0], benchT0.Add(time.Duration(i%n)*time.Millisecond))
				if len(dst) != 1 {
					b.Fatalf("PopDue handed out %d entries, want 1", len(dst))
				}
			}
		})
	}
}

// BenchmarkQueuePopDueBurst measures PopDue handing out a burst of 1,000
// entries due at the same instant (1,000 jobs on the same cron second) from
// a queue of n; ns/op is per burst, ns/entry per entry.
func BenchmarkQueuePopDueBurst(b *testing.B) {
	const burst = 1000
	for _, n := range queueSizes {
		b.Run(fmt.Sprintf("entries=%d", n), func(b *testing.B) {
			bursts := n / burst
			es := make([]schedule.Entry, n)
			for i := range es {
				es[i] = schedule.Entry{RunID: int64(i + 1), JobID: int64(i%burst + 1), At: benchT0.Add(time.Duration(i/burst) * time.Second)}
			}
			rand.New(rand.NewPCG(5, 6)).Shuffle(n, func(i, j int) { es[i], es[j] = es[j], es[i] })
			q := schedule.NewQueue()
			q.Push(es...)
			dst := make([]schedule.Entry, 0, burst)
			b.ReportAllocs()
			b.ResetTimer()
			for i := range b.N {
				if i > 0 && i%bursts == 0 {
					b.StopTimer()
					q.Push(es...)
					b.StartTimer()
				}
				dst, _ = q.PopDue(dst[:0], benchT0.Add(time.Duration(i%bursts)*time.Second))
				if len(dst) != burst {
					b.Fatalf("PopDue handed out %d entries, want %d", len(dst), burst)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*burst), "ns/entry")
		})
	}
}
