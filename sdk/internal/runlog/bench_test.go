package runlog

import (
	"testing"
	"time"
)

// BenchmarkLogRecord measures writing the log of a short run: two lines
// kept in memory, then appended to its segment when the run ends.
func BenchmarkLogRecord(b *testing.B) {
	s := newTestStore(b, b.TempDir(), time.Now)
	day := s.Today()
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		id := int64(i + 1)
		l := NewLog(s, day, id, s.now)
		l.Printf("run %d accepted", id)
		l.Printf("----- run %d ended: SUCCEEDED", id)
		if err := l.Close(); err != nil {
			b.Fatal(err)
		}
	}
}
