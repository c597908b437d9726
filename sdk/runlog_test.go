package sdk

import (
	"os"
	"strings"
	"testing"
	"time"
)

func TestRunLogBuffers(t *testing.T) {
	t.Parallel()
	s := newTestLogStore(t, t.TempDir(), time.Now)
	exists := func(p string) bool { _, err := os.Stat(p); return err == nil }
	day := s.today()

	l := newRunLog(s, day, 1, s.now)
	l.printf("a short line")
	if exists(s.segmentPath(day, 1)) || exists(s.path(day, 1)) {
		t.Fatal("a short log was written to disk before the run ended")
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if got := readWhole(t, s, 1); !strings.HasSuffix(got, "a short line\n") {
		t.Fatalf("log after Close = %q", got)
	}
	if exists(s.path(day, 1)) {
		t.Error("a short log got a file of its own")
	}
	l.printf("after close") // dropped
	if got := readWhole(t, s, 1); strings.Contains(got, "after close") {
		t.Error("a line written after Close reached the log")
	}

	l2 := newRunLog(s, day, 2, s.now)
	big := strings.Repeat("x", 1000) + "\n"
	for range spillBytes/len(big) + 1 {
		if _, err := l2.Write([]byte(big)); err != nil {
			t.Fatal(err)
		}
	}
	if !exists(s.path(day, 2)) {
		t.Error("a log past spillBytes is still only in memory")
	}
	l2.printf("last")
	l2.Close()
	if got := readWhole(t, s, 2); len(got) < spillBytes || !strings.HasSuffix(got, "last\n") {
		t.Errorf("log past spillBytes: %d bytes ending %q", len(got), got[max(0, len(got)-10):])
	}

	l3 := newRunLog(s, day, 3, s.now)
	l3.printf("running")
	p, err := l3.sync()
	if err != nil || p != s.path(day, 3) || !exists(p) {
		t.Errorf("sync = %s, %v, file exists %v; a reader must find the lines so far", p, err, exists(p))
	}
	l3.Close()
	if p, err := l3.sync(); p != "" || err != nil {
		t.Errorf("sync after Close = %q, %v; want no path", p, err)
	}
	if got := readWhole(t, s, 3); !strings.HasSuffix(got, "running\n") {
		t.Errorf("log read after sync and Close = %q", got)
	}
}
