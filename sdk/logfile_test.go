package sdk

import (
	"bufio"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
)

// writeLines writes n numbered lines to a new file and returns its path.
func writeLines(t *testing.T, n int, last string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "run.log")
	f, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	w := bufio.NewWriter(f)
	for i := 1; i <= n; i++ {
		fmt.Fprintf(w, "line %d %s\n", i, strings.Repeat("x", i%100))
	}
	w.WriteString(last)
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestReadLogPage(t *testing.T) {
	t.Parallel()

	t.Run("PagesThroughTheWholeFile", func(t *testing.T) {
		t.Parallel()
		p := writeLines(t, 25_000, "")
		want, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		var got strings.Builder
		from, pages := 1, 0
		for {
			page, err := readLogPage(p, from, LogPageMaxLines, LogPageMaxBytes, true)
			if err != nil {
				t.Fatal(err)
			}
			pages++
			lines := strings.Count(page.content, "\n")
			if page.fromLine != from || page.toLine != from+lines-1 {
				t.Fatalf("page from %d = [%d, %d] with %d lines", from, page.fromLine, page.toLine, lines)
			}
			if lines > LogPageMaxLines || len(page.content) > LogPageMaxBytes {
				t.Fatalf("page from %d has %d lines, %d bytes: over the bounds", from, lines, len(page.content))
			}
			got.WriteString(page.content)
			if page.end {
				break
			}
			from = page.toLine + 1
		}
		if got.String() != string(want) {
			t.Errorf("pages differ from the file (%d vs %d bytes)", got.Len(), len(want))
		}
		if pages != 25 {
			t.Errorf("%d pages, want 25", pages)
		}
	})

	t.Run("ByteBound", func(t *testing.T) {
		t.Parallel()
		p := filepath.Join(t.TempDir(), "run.log")
		line := strings.Repeat("y", 999) + "\n"
		if err := os.WriteFile(p, []byte(strings.Repeat(line, 600)), 0o600); err != nil {
			t.Fatal(err)
		}
		page, err := readLogPage(p, 1, LogPageMaxLines, LogPageMaxBytes, true)
		if err != nil {
			t.Fatal(err)
		}
		if want := LogPageMaxBytes / 1000; page.toLine != want || page.end {
			t.Errorf("page = [%d, %d] end %v, want [1, %d] and more to come", page.fromLine, page.toLine, page.end, want)
		}
	})

	t.Run("HugeLineIsCut", func(t *testing.T) {
		t.Parallel()
		p := filepath.Join(t.TempDir(), "run.log")
		content := "first\n" + strings.Repeat("é", 1<<20) + "\nlast\n"
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		page, err := readLogPage(p, 2, LogPageMaxLines, LogPageMaxBytes, true)
		if err != nil {
			t.Fatal(err)
		}
		if page.toLine != 2 || !strings.HasSuffix(page.content, truncatedMark+"\n") || len(page.content) > LogPageMaxBytes {
			t.Errorf("page = [%d, %d], %d bytes, ends %q", page.fromLine, page.toLine, len(page.content), page.content[max(0, len(page.content)-20):])
		}
		if !strings.HasPrefix(page.content, "éé") || strings.ContainsRune(page.content, '\uFFFD') {
			t.Error("the cut line is not valid UTF-8 cut on a rune boundary")
		}
		page, err = readLogPage(p, 3, LogPageMaxLines, LogPageMaxBytes, true)
		if err != nil || page.content != "last\n" || !page.end {
			t.Errorf("next page = %+v, %v; want \"last\" and the end", page, err)
		}
	})

	t.Run("RunningRunHoldsBackItsPartialLine", func(t *testing.T) {
		t.Parallel()
		p := writeLines(t, 3, "half a li")
		page, err := readLogPage(p, 1, LogPageMaxLines, LogPageMaxBytes, false)
		if err != nil {
			t.Fatal(err)
		}
		if page.toLine != 3 || strings.Contains(page.content, "half") || page.end {
			t.Errorf("running: page = [%d, %d] end %v %q", page.fromLine, page.toLine, page.end, page.content)
		}
		page, err = readLogPage(p, 4, LogPageMaxLines, LogPageMaxBytes, false)
		if err != nil || page.toLine != 3 || page.content != "" || page.end {
			t.Errorf("running, past the end: %+v, %v", page, err)
		}
		page, err = readLogPage(p, 1, LogPageMaxLines, LogPageMaxBytes, true)
		if err != nil || page.toLine != 4 || !strings.HasSuffix(page.content, "half a li") || !page.end {
			t.Errorf("ended: %+v, %v", page, err)
		}
		page, err = readLogPage(p, 9, LogPageMaxLines, LogPageMaxBytes, true)
		if err != nil || page.fromLine != 9 || page.toLine != 8 || !page.end {
			t.Errorf("ended, past the end: %+v, %v", page, err)
		}
	})

	t.Run("FromLineZeroIsOne", func(t *testing.T) {
		t.Parallel()
		p := writeLines(t, 2, "")
		page, err := readLogPage(p, 0, LogPageMaxLines, LogPageMaxBytes, true)
		if err != nil || page.fromLine != 1 || page.toLine != 2 {
			t.Errorf("from 0: %+v, %v", page, err)
		}
	})
}

// TestReadLogPageMemory is not parallel: it measures allocation.
func TestReadLogPageMemory(t *testing.T) {
	// 64 MiB: 16 lines of 4 MiB, then 400,000 short ones.
	p := filepath.Join(t.TempDir(), "big.log")
	f, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	w := bufio.NewWriterSize(f, 1<<20)
	long := strings.Repeat("z", 4<<20)
	for range 16 {
		w.WriteString(long + "\n")
	}
	for i := range 400_000 {
		fmt.Fprintf(w, "short line %d\n", i)
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	f.Close()

	for _, from := range []int{1, 200_000, 400_016} {
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		page, err := readLogPage(p, from, LogPageMaxLines, LogPageMaxBytes, true)
		runtime.ReadMemStats(&after)
		if err != nil {
			t.Fatal(err)
		}
		if page.toLine < from {
			t.Errorf("from %d: empty page", from)
		}
		// One page, its string copy and a read buffer: well under 2 MiB for
		// a 64 MiB file.
		if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 2<<20 {
			t.Errorf("reading a page from line %d allocated %d bytes", from, alloc)
		}
	}
}

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
		s := &logStore{dir: t.TempDir(), now: func() time.Time { return now }}
		p, err := writeLog(s, 1_234_567, "first line\n")
		if err != nil {
			t.Fatal(err)
		}
		if b, err := os.ReadFile(p); err != nil || string(b) != "first line\n" {
			t.Errorf("log = %q, %v; want the first line", b, err)
		}
		if want := filepath.Join(s.dir, "2026-03-04", "1234", "1234567.log"); p != want {
			t.Errorf("path %s, want %s", p, want)
		}
		if _, err := writeLog(s, 1_234_567, ""); !errors.Is(err, fs.ErrExist) {
			t.Errorf("second log for the same run, the same day: %v, want fs.ErrExist", err)
		}
		now = now.Add(24 * time.Hour)
		if _, err := writeLog(s, 1_234_567, ""); !errors.Is(err, fs.ErrExist) {
			t.Errorf("second log for the same run, the next day: %v, want fs.ErrExist", err)
		}
		if got, err := s.find(1_234_567); err != nil || got != p {
			t.Errorf("find = %s, %v; want %s", got, err, p)
		}
		// Runs fired every second for a day: at most 1000 files per directory.
		for id := int64(2_000_000); id < 2_003_500; id++ {
			if _, err := writeLog(s, id, ""); err != nil {
				t.Fatal(err)
			}
		}
		err = filepath.WalkDir(s.dir, func(path string, d os.DirEntry, err error) error {
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

	t.Run("Retention", func(t *testing.T) {
		t.Parallel()
		now := day("2026-01-01 23:59:59")
		s := &logStore{dir: t.TempDir(), now: func() time.Time { return now }}
		if _, err := writeLog(s, 1, ""); err != nil {
			t.Fatal(err)
		}
		now = day("2026-01-02 00:00:00")
		if _, err := writeLog(s, 2, ""); err != nil {
			t.Fatal(err)
		}
		const retention = 30 * 24 * time.Hour
		// The last log of January 1 turns 30 days old on January 31.
		now = day("2026-01-31 23:59:59")
		if removed, err := s.clean(retention); err != nil || len(removed) != 0 {
			t.Errorf("clean on Jan 31 = %v, %v; want nothing removed", removed, err)
		}
		now = day("2026-02-01 00:00:00")
		if removed, err := s.clean(retention); err != nil || len(removed) != 1 || removed[0] != "2026-01-01" {
			t.Errorf("clean on Feb 1 = %v, %v; want [2026-01-01]", removed, err)
		}
		if _, err := s.find(1); err == nil {
			t.Error("the log of run 1 survived its retention")
		}
		if _, err := s.find(2); err != nil {
			t.Errorf("the log of run 2 is gone: %v", err)
		}
		now = day("2030-01-01 00:00:00")
		if removed, err := s.clean(-1); err != nil || len(removed) != 0 {
			t.Errorf("clean with retention -1 = %v, %v; want nothing removed", removed, err)
		}
	})
}

// writeLog writes first as run id's log, as the dispatcher does, and
// returns its path.
func writeLog(s *logStore, id int64, first string) (string, error) {
	p, err := s.reserve(id)
	if err != nil {
		return p, err
	}
	l := newRunLog(p, s.open, s.now)
	if _, err := l.Write([]byte(first)); err != nil {
		return p, err
	}
	return p, l.Close()
}

func TestRunLogBuffers(t *testing.T) {
	t.Parallel()
	s := &logStore{dir: t.TempDir(), now: time.Now}
	exists := func(p string) bool { _, err := os.Stat(p); return err == nil }

	p, _ := s.reserve(1)
	l := newRunLog(p, s.open, s.now)
	l.printf("a short line")
	if exists(p) {
		t.Fatal("a short log was written to disk before the run ended")
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(p); !strings.HasSuffix(string(b), "a short line\n") {
		t.Fatalf("log after Close = %q", b)
	}
	l.printf("after close") // dropped
	if b, _ := os.ReadFile(p); strings.Contains(string(b), "after close") {
		t.Error("a line written after Close reached the file")
	}

	p2, _ := s.reserve(2)
	l2 := newRunLog(p2, s.open, s.now)
	big := strings.Repeat("x", 1000) + "\n"
	for range spillBytes/len(big) + 1 {
		l2.Write([]byte(big))
	}
	if !exists(p2) {
		t.Error("a log past spillBytes is still only in memory")
	}
	l2.Close()

	p3, _ := s.reserve(3)
	l3 := newRunLog(p3, s.open, s.now)
	l3.printf("running")
	if err := l3.sync(); err != nil || !exists(p3) {
		t.Errorf("sync: %v, file exists %v; a reader must find the lines so far", err, exists(p3))
	}
	l3.Close()
}
