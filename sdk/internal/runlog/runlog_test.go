package runlog

import (
	"os"
	"strconv"
	"strings"
	"testing"
	"time"
)

func TestRunLogBuffers(t *testing.T) {
	t.Parallel()
	s := newTestStore(t, t.TempDir(), time.Now)
	exists := func(p string) bool { _, err := os.Stat(p); return err == nil }
	day := s.Today()

	l := NewLog(s, day, 1, s.now)
	l.Printf("a short line")
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
	l.Printf("after close") // dropped
	if got := readWhole(t, s, 1); strings.Contains(got, "after close") {
		t.Error("a line written after Close reached the log")
	}

	l2 := NewLog(s, day, 2, s.now)
	big := strings.Repeat("x", 1000) + "\n"
	for range SpillBytes/len(big) + 1 {
		if _, err := l2.Write([]byte(big)); err != nil {
			t.Fatal(err)
		}
	}
	if !exists(s.path(day, 2)) {
		t.Error("a log past SpillBytes is still only in memory")
	}
	l2.Printf("last")
	l2.Close()
	if got := readWhole(t, s, 2); len(got) < SpillBytes || !strings.HasSuffix(got, "last\n") {
		t.Errorf("log past SpillBytes: %d bytes ending %q", len(got), got[max(0, len(got)-10):])
	}

	l3 := NewLog(s, day, 3, s.now)
	l3.Printf("running")
	p, err := l3.Sync()
	if err != nil || p != s.path(day, 3) || !exists(p) {
		t.Errorf("sync = %s, %v, file exists %v; a reader must find the lines so far", p, err, exists(p))
	}
	l3.Close()
	if p, err := l3.Sync(); p != "" || err != nil {
		t.Errorf("sync after Close = %q, %v; want no path", p, err)
	}
	if got := readWhole(t, s, 3); !strings.HasSuffix(got, "running\n") {
		t.Errorf("log read after sync and Close = %q", got)
	}
}

// TestRunLogStartLine: the start line noted by started is written before
// the next line, when the log gets a file of its own (a reader's sync),
// and when the log is put away with nothing after it, by Close or by the
// finisher's closeLogs, at the time it was noted.
func TestRunLogStartLine(t *testing.T) {
	t.Parallel()
	s := newTestStore(t, t.TempDir(), time.Now)
	at := time.Date(2026, 11, 26, 14, 0, 0, 7_000_000, time.UTC)
	start := appendLogTime(nil, at)
	const accepted = "accepted\n"
	open := func(id int64) *Log {
		l := NewLog(s, s.Today(), id, s.now)
		if _, err := l.Write([]byte(accepted)); err != nil {
			t.Fatal(err)
		}
		l.Started(at)
		return l
	}
	startLine := func(id int64) string { return string(start) + " ----- run " + strconv.FormatInt(id, 10) + " started\n" }

	l := open(1) // a handler's line follows
	if _, err := l.Write([]byte("hello\n")); err != nil {
		t.Fatal(err)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if got, want := readWhole(t, s, 1), accepted+startLine(1)+"hello\n"; got != want {
		t.Errorf("log with a line after the start = %q, want %q", got, want)
	}

	l = open(2) // closed at once
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if got, want := readWhole(t, s, 2), accepted+startLine(2); got != want {
		t.Errorf("log closed after the start = %q, want %q", got, want)
	}

	l = open(3) // put away by the finisher
	if err := s.CloseLogs([]*Log{l}); err != nil {
		t.Fatal(err)
	}
	if got, want := readWhole(t, s, 3), accepted+startLine(3); got != want {
		t.Errorf("log put away by closeLogs = %q, want %q", got, want)
	}

	l = open(4) // read while it runs
	path, err := l.Sync()
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := string(b), accepted+startLine(4); got != want {
		t.Errorf("log read while its run runs = %q, want %q", got, want)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
}
