package runlog

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestLogStore(t *testing.T) {
	t.Parallel()

	day := func(s string) time.Time {
		d, err := time.Parse(time.DateTime, s)
		if err != nil {
			t.Fatal(err)
		}
		return d
	}

	t.Run("Layout", func(t *testing.T) {
		t.Parallel()
		now := day("2026-03-04 12:00:00")
		s := newTestStore(t, t.TempDir(), func() time.Time { return now })
		if err := writeLog(s, 1_234_567, "first line\n"); err != nil {
			t.Fatal(err)
		}
		if got := readWhole(t, s, 1_234_567); got != "first line\n" {
			t.Errorf("log = %q, want the first line", got)
		}
		seg := filepath.Join(s.dir, "2026-03-04", "1234.seg2")
		if b, err := os.ReadFile(seg); err != nil || string(b) != "#carillon-log 1234567 11 865a6ebc 270c2300\nfirst line\n" {
			t.Errorf("segment %s = %q, %v; want one record", seg, b, err)
		}
		if _, err := os.Stat(s.path("2026-03-04", 1_234_567)); err == nil {
			t.Error("a short log got a file of its own")
		}
		now = now.Add(24 * time.Hour)
		if got := readWhole(t, s, 1_234_567); got != "first line\n" {
			t.Errorf("log the next day = %q, want the first line", got)
		}
		// Runs fired every second for a day: at most 1000 entries per
		// directory, and every log in its place.
		for id := int64(2_000_000); id < 2_003_500; id++ {
			if err := writeLog(s, id, fmt.Sprintf("log of %d\n", id)); err != nil {
				t.Fatal(err)
			}
		}
		for _, id := range []int64{2_000_000, 2_000_999, 2_001_000, 2_003_499} {
			if got, want := readWhole(t, s, id), fmt.Sprintf("log of %d\n", id); got != want {
				t.Errorf("log of %d = %q, want %q", id, got, want)
			}
		}
		err := filepath.WalkDir(s.dir, func(path string, d os.DirEntry, err error) error {
			if err != nil || !d.IsDir() {
				return err
			}
			entries, err := os.ReadDir(path)
			if len(entries) > 1000 {
				t.Errorf("%s has %d entries", path, len(entries))
			}
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
	})

	t.Run("Missing", func(t *testing.T) {
		t.Parallel()
		s := newTestStore(t, t.TempDir(), time.Now)
		if _, err := s.Find("", 1); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("find in an empty store = %v, want fs.ErrNotExist", err)
		}
		if err := writeLog(s, 1001, "x\n"); err != nil {
			t.Fatal(err)
		}
		// Same segment, another run.
		if _, err := s.Find("", 1002); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("find of a run not in its segment = %v, want fs.ErrNotExist", err)
		}
	})

	t.Run("Retention", func(t *testing.T) {
		t.Parallel()
		now := day("2026-01-01 23:59:59")
		s := newTestStore(t, t.TempDir(), func() time.Time { return now })
		if err := writeLog(s, 1, ""); err != nil {
			t.Fatal(err)
		}
		now = day("2026-01-02 00:00:00")
		if err := writeLog(s, 2, ""); err != nil {
			t.Fatal(err)
		}
		const retention = 30 * 24 * time.Hour
		// The last log of January 1 turns 30 days old on January 31.
		now = day("2026-01-31 23:59:59")
		if removed, err := s.Clean(retention); err != nil || len(removed) != 0 {
			t.Errorf("clean on Jan 31 = %v, %v; want nothing removed", removed, err)
		}
		now = day("2026-02-01 00:00:00")
		if removed, err := s.Clean(retention); err != nil || len(removed) != 1 || removed[0] != "2026-01-01" {
			t.Errorf("clean on Feb 1 = %v, %v; want [2026-01-01]", removed, err)
		}
		if _, err := s.Find("", 1); err == nil {
			t.Error("the log of run 1 survived its retention")
		}
		if _, err := s.Find("", 2); err != nil {
			t.Errorf("the log of run 2 is gone: %v", err)
		}
		for p, sf := range s.segs {
			if sf.day == "2026-01-01" {
				t.Errorf("segment %s of a removed day is still open", p)
			}
		}
		now = day("2030-01-01 00:00:00")
		if removed, err := s.Clean(-1); err != nil || len(removed) != 0 {
			t.Errorf("clean with retention -1 = %v, %v; want nothing removed", removed, err)
		}
	})

	t.Run("Databases", func(t *testing.T) {
		t.Parallel()
		dir := t.TempDir()
		now := day("2026-05-06 12:00:00")
		s := newTestStore(t, dir, func() time.Time { return now })
		// A log of run 1 from an admin that predates database ids: no database.
		if err := writeLog(s, 1, "no database\n"); err != nil {
			t.Fatal(err)
		}
		const a, odd = "0123456789abcdef0123456789abcdef", "Odd/../ID"
		for _, db := range []string{a, odd} {
			l := NewLog(s, s.RunDir(s.Today(), db), 1, s.now)
			if _, err := l.Write([]byte("run 1 of " + db + "\n")); err != nil {
				t.Fatal(err)
			}
			if err := l.Close(); err != nil {
				t.Fatal(err)
			}
		}
		read := func(db string, id int64) (string, error) {
			src, err := s.Find(db, id)
			if err != nil {
				return "", err
			}
			defer src.Close()
			b, err := io.ReadAll(src)
			return string(b), err
		}
		for db, want := range map[string]string{"": "no database\n", a: "run 1 of " + a + "\n", odd: "run 1 of " + odd + "\n"} {
			if got, err := read(db, 1); err != nil || got != want {
				t.Errorf("log of run 1 of database %q = %q, %v; want %q", db, got, err, want)
			}
		}
		if _, err := read("another", 1); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("log of run 1 of a database without it = %v, want fs.ErrNotExist", err)
		}
		if _, err := os.Stat(filepath.Join(dir, "2026-05-06", "db-"+a, "0.seg2")); err != nil {
			t.Errorf("database %s's segment is not where the layout says: %v", a, err)
		}
		entries, err := os.ReadDir(filepath.Join(dir, "2026-05-06"))
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range entries {
			if e.Name() != "0.seg2" && (!strings.HasPrefix(e.Name(), "db-") || strings.Trim(e.Name(), "abcdefghijklmnopqrstuvwxyz0123456789-_~") != "") {
				t.Errorf("day directory holds %q, want only the segment of no database and db-<safe name> directories", e.Name())
			}
		}
		if len(entries) != 3 {
			t.Errorf("day directory holds %d entries, want the segment of no database and 2 databases", len(entries))
		}
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}

		// A new process remembers each database's runs apart.
		s2 := newTestStore(t, dir, func() time.Time { return now })
		for _, db := range []string{"", a, odd} {
			if got, err := s2.EarlierRuns(db, 1); err != nil || !slices.Equal(got, []int64{1}) {
				t.Errorf("earlierRuns(%q, 1) = %v, %v; want [1]", db, got, err)
			}
		}
		if got, err := s2.EarlierRuns("another", 1); err != nil || got != nil {
			t.Errorf("earlierRuns of a database without logs = %v, %v; want none", got, err)
		}
		// Retention removes the databases' logs with their day.
		now = day("2026-07-01 00:00:00")
		if removed, err := s2.Clean(time.Hour); err != nil || !slices.Equal(removed, []string{"2026-05-06"}) {
			t.Errorf("clean = %v, %v", removed, err)
		}
		if _, err := s2.Find(a, 1); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("log of a removed day = %v, want fs.ErrNotExist", err)
		}
	})

	t.Run("EarlierRuns", func(t *testing.T) {
		t.Parallel()
		dir := t.TempDir()
		now := day("2026-05-06 00:10:00")
		first := newTestStore(t, dir, func() time.Time { return now.Add(-time.Hour) }) // yesterday
		for _, id := range []int64{5_000, 5_001} {
			if err := writeLog(first, id, "in a segment\n"); err != nil {
				t.Fatal(err)
			}
		}
		l := NewLog(first, first.Today(), 5_002, first.now)
		if _, err := l.Write([]byte(strings.Repeat("x", SpillBytes+1))); err != nil { // its own file
			t.Fatal(err)
		}
		if err := l.Close(); err != nil {
			t.Fatal(err)
		}

		// A new process, today.
		s := newTestStore(t, dir, func() time.Time { return now })
		got, err := s.EarlierRuns("", 5_999)
		slices.Sort(got)
		if err != nil || !slices.Equal(got, []int64{5_000, 5_001, 5_002}) {
			t.Errorf("earlierRuns(5999) = %v, %v; want [5000 5001 5002]", got, err)
		}
		if got, err := s.EarlierRuns("", 5_000); err != nil || got != nil {
			t.Errorf("earlierRuns of the same bucket again = %v, %v; want none", got, err)
		}
		if got, err := s.EarlierRuns("", 6_000); err != nil || got != nil {
			t.Errorf("earlierRuns of a bucket without logs = %v, %v; want none", got, err)
		}
	})
}

func TestLogSegment(t *testing.T) {
	t.Parallel()

	t.Run("PagesAreTheSameAsAFile", func(t *testing.T) {
		t.Parallel()
		p := writeLines(t, 700, "last line without a newline")
		content, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		s := newTestStore(t, t.TempDir(), time.Now)
		// The record sits between two others in its segment.
		for id, body := range map[int64][]byte{7: []byte("before\n"), 8: content, 9: []byte("after\n")} {
			if err := s.appendRecord(s.Today(), id, body); err != nil {
				t.Fatal(err)
			}
		}
		for _, from := range []int{0, 1, 2, 99, 100, 350, 699, 700, 701, 702} {
			for _, maxLines := range []int{1, 100, 1000} {
				want, err := readFilePage(t, p, from, maxLines, 4096, true)
				if err != nil {
					t.Fatal(err)
				}
				src, err := s.Find("", 8)
				if err != nil {
					t.Fatal(err)
				}
				got, err := ReadPage(src, from, maxLines, 4096, true)
				src.Close()
				if err != nil || got != want {
					t.Errorf("from %d, %d lines: segment page %+v, %v; file page %+v", from, maxLines, got, err, want)
				}
			}
		}
	})

	t.Run("TornTailIsCutOnReopen", func(t *testing.T) {
		t.Parallel()
		dir := t.TempDir()
		s := newTestStore(t, dir, time.Now)
		if err := writeLog(s, 1, "one\n"); err != nil {
			t.Fatal(err)
		}
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
		// A process died while appending run 2's record.
		seg := s.segmentPath(s.Today(), 1)
		f, err := os.OpenFile(seg, os.O_WRONLY|os.O_APPEND, 0)
		if err != nil {
			t.Fatal(err)
		}
		torn := appendRecord(nil, 2, []byte("only a part"+strings.Repeat(" of the log", 10)))
		if _, err := f.Write(torn[:len(torn)-100]); err != nil {
			t.Fatal(err)
		}
		f.Close()
		if _, err := s.Find("", 2); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("find of a torn record = %v, want fs.ErrNotExist", err)
		}

		next := newTestStore(t, dir, time.Now)
		if err := writeLog(next, 3, "three\n"); err != nil {
			t.Fatal(err)
		}
		if got := readWhole(t, next, 1); got != "one\n" {
			t.Errorf("log of run 1 = %q", got)
		}
		if got := readWhole(t, next, 3); got != "three\n" {
			t.Errorf("log of run 3, appended after the torn record = %q", got)
		}
		if b, _ := os.ReadFile(seg); strings.Contains(string(b), "only a part") {
			t.Errorf("the torn record is still there: %q", b)
		}
	})

	t.Run("OpenSegmentsAreBounded", func(t *testing.T) {
		t.Parallel()
		s := newTestStore(t, t.TempDir(), time.Now)
		const buckets = maxOpenSegments + 10
		for round := range 2 {
			for b := range int64(buckets) {
				id := b*1000 + int64(round) + 1
				if err := writeLog(s, id, fmt.Sprintf("run %d\n", id)); err != nil {
					t.Fatal(err)
				}
			}
		}
		if n := len(s.segs); n > maxOpenSegments {
			t.Errorf("%d segments open, want at most %d", n, maxOpenSegments)
		}
		for b := range int64(buckets) {
			for _, id := range []int64{b*1000 + 1, b*1000 + 2} {
				if got, want := readWhole(t, s, id), fmt.Sprintf("run %d\n", id); got != want {
					t.Errorf("log of %d = %q, want %q", id, got, want)
				}
			}
		}
	})
}

func TestLogSegmentConcurrentAppends(t *testing.T) {
	t.Parallel()
	s := newTestStore(t, t.TempDir(), time.Now)
	// Runs of more buckets than there are open segments end at the same
	// time: appends to a segment interleave with its closing and reopening.
	const writers, perWriter, buckets = 8, 200, maxOpenSegments + 8
	id := func(w, i int) int64 { return int64(i%buckets)*1000 + int64(w*perWriter+i/buckets) + 1 }
	var wg sync.WaitGroup
	for w := range writers {
		wg.Go(func() {
			for i := range perWriter {
				if err := writeLog(s, id(w, i), fmt.Sprintf("log of %d\n", id(w, i))); err != nil {
					t.Error(err)
				}
			}
		})
	}
	wg.Wait()
	for w := range writers {
		for i := range perWriter {
			if got, want := readWhole(t, s, id(w, i)), fmt.Sprintf("log of %d\n", id(w, i)); got != want {
				t.Fatalf("log of %d = %q, want %q", id(w, i), got, want)
			}
		}
	}
}

// TestCloseLogs: logs closed together, some in memory (of two segments),
// one with a file of its own, all read back whole.
func TestCloseLogs(t *testing.T) {
	t.Parallel()
	s := newTestStore(t, t.TempDir(), time.Now)
	ids := []int64{999, 1000, 1001, 5}
	var logs []*Log
	for _, id := range ids {
		l := NewLog(s, s.Today(), id, s.now)
		if _, err := fmt.Fprintf(l, "log of %d\n", id); err != nil {
			t.Fatal(err)
		}
		logs = append(logs, l)
	}
	if logs[3].File() == nil { // the last one gets a file of its own
		t.Fatal("no file for the log of run 5")
	}
	if err := s.CloseLogs(append(logs, nil)); err != nil {
		t.Fatal(err)
	}
	for _, id := range ids {
		if got, want := readWhole(t, s, id), fmt.Sprintf("log of %d\n", id); got != want {
			t.Errorf("log of %d = %q, want %q", id, got, want)
		}
	}
	if _, err := logs[0].Write([]byte("late\n")); err != nil || readWhole(t, s, 999) != "log of 999\n" {
		t.Errorf("a write after closeLogs changed the log (err %v)", err)
	}
}

// newTestStore opens the run logs in dir, and closes them at the end of
// the test.
func newTestStore(t testing.TB, dir string, now func() time.Time) *Store {
	t.Helper()
	s, err := Open(dir, now)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// writeLog writes body as the whole log of run id, accepted now, as the
// dispatcher does.
func writeLog(s *Store, id int64, body string) error {
	l := NewLog(s, s.Today(), id, s.now)
	if _, err := l.Write([]byte(body)); err != nil {
		return err
	}
	return l.Close()
}

// readWhole returns the whole log of run id.
func readWhole(t *testing.T, s *Store, id int64) string {
	t.Helper()
	src, err := s.Find("", id)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	b, err := io.ReadAll(src)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
