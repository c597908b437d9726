package runlog

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// readFilePage reads one page of the log file at p.
func readFilePage(t *testing.T, p string, from, maxLines, maxBytes int, ended bool) (Page, error) {
	t.Helper()
	f, err := os.Open(p)
	if err != nil {
		return Page{}, err
	}
	defer f.Close()
	return ReadPage(f, from, maxLines, maxBytes, ended)
}

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
	_, _ = w.WriteString(last) // a bufio.Writer: Flush reports its errors
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
			page, err := readFilePage(t, p, from, PageMaxLines, PageMaxBytes, true)
			if err != nil {
				t.Fatal(err)
			}
			pages++
			lines := strings.Count(page.Content, "\n")
			if page.FromLine != from || page.ToLine != from+lines-1 {
				t.Fatalf("page from %d = [%d, %d] with %d lines", from, page.FromLine, page.ToLine, lines)
			}
			if lines > PageMaxLines || len(page.Content) > PageMaxBytes {
				t.Fatalf("page from %d has %d lines, %d bytes: over the bounds", from, lines, len(page.Content))
			}
			got.WriteString(page.Content)
			if page.End {
				break
			}
			from = page.ToLine + 1
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
		page, err := readFilePage(t, p, 1, PageMaxLines, PageMaxBytes, true)
		if err != nil {
			t.Fatal(err)
		}
		if want := PageMaxBytes / 1000; page.ToLine != want || page.End {
			t.Errorf("page = [%d, %d] end %v, want [1, %d] and more to come", page.FromLine, page.ToLine, page.End, want)
		}
	})

	t.Run("HugeLineIsCut", func(t *testing.T) {
		t.Parallel()
		p := filepath.Join(t.TempDir(), "run.log")
		content := "first\n" + strings.Repeat("é", 1<<20) + "\nlast\n"
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		page, err := readFilePage(t, p, 2, PageMaxLines, PageMaxBytes, true)
		if err != nil {
			t.Fatal(err)
		}
		if page.ToLine != 2 || !strings.HasSuffix(page.Content, truncatedMark+"\n") || len(page.Content) > PageMaxBytes {
			t.Errorf("page = [%d, %d], %d bytes, ends %q", page.FromLine, page.ToLine, len(page.Content), page.Content[max(0, len(page.Content)-20):])
		}
		if !strings.HasPrefix(page.Content, "éé") || strings.ContainsRune(page.Content, '\uFFFD') {
			t.Error("the cut line is not valid UTF-8 cut on a rune boundary")
		}
		page, err = readFilePage(t, p, 3, PageMaxLines, PageMaxBytes, true)
		if err != nil || page.Content != "last\n" || !page.End {
			t.Errorf("next page = %+v, %v; want \"last\" and the end", page, err)
		}
	})

	t.Run("RunningRunHoldsBackItsPartialLine", func(t *testing.T) {
		t.Parallel()
		p := writeLines(t, 3, "half a li")
		page, err := readFilePage(t, p, 1, PageMaxLines, PageMaxBytes, false)
		if err != nil {
			t.Fatal(err)
		}
		if page.ToLine != 3 || strings.Contains(page.Content, "half") || page.End {
			t.Errorf("running: page = [%d, %d] end %v %q", page.FromLine, page.ToLine, page.End, page.Content)
		}
		page, err = readFilePage(t, p, 4, PageMaxLines, PageMaxBytes, false)
		if err != nil || page.ToLine != 3 || page.Content != "" || page.End {
			t.Errorf("running, past the end: %+v, %v", page, err)
		}
		page, err = readFilePage(t, p, 1, PageMaxLines, PageMaxBytes, true)
		if err != nil || page.ToLine != 4 || !strings.HasSuffix(page.Content, "half a li") || !page.End {
			t.Errorf("ended: %+v, %v", page, err)
		}
		page, err = readFilePage(t, p, 9, PageMaxLines, PageMaxBytes, true)
		if err != nil || page.FromLine != 9 || page.ToLine != 8 || !page.End {
			t.Errorf("ended, past the end: %+v, %v", page, err)
		}
	})

	t.Run("FromLineZeroIsOne", func(t *testing.T) {
		t.Parallel()
		p := writeLines(t, 2, "")
		page, err := readFilePage(t, p, 0, PageMaxLines, PageMaxBytes, true)
		if err != nil || page.FromLine != 1 || page.ToLine != 2 {
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
		_, _ = w.WriteString(long + "\n") // Flush reports its errors
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
		page, err := readFilePage(t, p, from, PageMaxLines, PageMaxBytes, true)
		runtime.ReadMemStats(&after)
		if err != nil {
			t.Fatal(err)
		}
		if page.ToLine < from {
			t.Errorf("from %d: empty page", from)
		}
		// One page, its string copy and a read buffer: well under 2 MiB for
		// a 64 MiB file.
		if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 2<<20 {
			t.Errorf("reading a page from line %d allocated %d bytes", from, alloc)
		}
	}
}
