package runlog

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"os"
	"strings"
	"testing"
	"time"
)

// damagedMark starts the line a damaged record's log reads with.
const damagedMark = "----- the record of this log in "

// readSegmentLog returns the whole log of run id as find gives it.
func readSegmentLog(s *Store, id int64) (string, error) {
	src, err := s.Find("", id)
	if err != nil {
		return "", err
	}
	defer src.Close()
	b, err := io.ReadAll(src)
	return string(b), err
}

// segmentLogBody is the log of run id in the damage tests: a few lines, so
// that damage in its middle is damage to its body.
func segmentLogBody(id int64) string {
	var b strings.Builder
	for i := range 4 {
		fmt.Fprintf(&b, "2026-01-02 03:04:05.000 run %d line %d\n", id, i)
	}
	return b.String()
}

// headerField returns the offsets [start, end) of the field-th
// space-separated field of the record header that ends just before body
// starts in seg, whatever the record format: field 2 is the log's length.
func headerField(t *testing.T, seg []byte, body, field int) (start, end int) {
	t.Helper()
	start = bytes.LastIndexByte(seg[:body-1], '\n') + 1
	for range field {
		start += bytes.IndexByte(seg[start:body], ' ') + 1
	}
	end = start + bytes.IndexAny(seg[start:body], " \n")
	if end < start {
		t.Fatalf("record header %q has no field %d", seg[start:body], field)
	}
	return start, end
}

func TestLogSegmentDamage(t *testing.T) {
	t.Parallel()
	// Each damages the record of run 3 (whose log starts at body in seg),
	// or the bytes right after it, and says whether run 3's log is still
	// its own (intact), reads marked as damaged, or is lost (its header is
	// gone, so nothing says whose the bytes were).
	tests := []struct {
		name   string
		damage func(t *testing.T, seg []byte, body int) []byte
		want   string // "intact", "damaged" or "lost"
	}{
		{"FlippedByteInTheLog", func(t *testing.T, seg []byte, body int) []byte {
			t.Helper()
			seg[body+30] ^= 0x20
			return seg
		}, "damaged"},
		{"LongerLength", func(t *testing.T, seg []byte, body int) []byte {
			t.Helper()
			i, _ := headerField(t, seg, body, 2)
			seg[i] = '9' // 1xx bytes: several records more
			return seg
		}, "damaged"},
		{"TruncatedLength", func(t *testing.T, seg []byte, body int) []byte {
			t.Helper()
			_, j := headerField(t, seg, body, 2)
			return append(seg[:j-1:j-1], seg[j:]...)
		}, "damaged"},
		{"GarbageInTheLog", func(t *testing.T, seg []byte, body int) []byte {
			t.Helper()
			return slicesInsert(seg, body+20, []byte("\x00\xffgarbage\n#carillon-log 4 5\n"))
		}, "damaged"},
		{"BytesCutFromTheLog", func(t *testing.T, seg []byte, body int) []byte {
			t.Helper()
			return append(seg[:body+10:body+10], seg[body+50:]...)
		}, "damaged"},
		{"GarbageAfterTheRecord", func(t *testing.T, seg []byte, body int) []byte {
			t.Helper()
			end := body + len(segmentLogBody(3))
			return slicesInsert(seg, end, []byte("garbage\n"))
		}, "intact"},
		{"HeaderOverwritten", func(t *testing.T, seg []byte, body int) []byte {
			t.Helper()
			start := bytes.LastIndexByte(seg[:body-1], '\n') + 1
			copy(seg[start:body-1], bytes.Repeat([]byte{'?'}, body-1-start))
			return seg
		}, "lost"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			s := newTestStore(t, dir, time.Now)
			for id := int64(1); id <= 5; id++ {
				if err := writeLog(s, id, segmentLogBody(id)); err != nil {
					t.Fatal(err)
				}
			}
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
			p := s.segmentPath(s.Today(), 1)
			seg, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			body := bytes.Index(seg, []byte(segmentLogBody(3)))
			seg = tt.damage(t, seg, body)
			if err := os.WriteFile(p, seg, 0o640); err != nil {
				t.Fatal(err)
			}

			check := func(s *Store, ids ...int64) {
				t.Helper()
				for _, id := range ids {
					if got, err := readSegmentLog(s, id); err != nil || got != segmentLogBody(id) {
						t.Errorf("log of run %d, a neighbour of the damage = %q, %v; want it whole", id, got, err)
					}
				}
				got, err := readSegmentLog(s, 3)
				switch tt.want {
				case "intact":
					if err != nil || got != segmentLogBody(3) {
						t.Errorf("log of run 3 = %q, %v; want it whole", got, err)
					}
				case "damaged":
					first, rest, _ := strings.Cut(got, "\n")
					if err != nil || !strings.HasPrefix(first, damagedMark) || !strings.HasSuffix(rest, "run 3 line 3\n") {
						t.Errorf("log of run 3 = %q, %v; want a line saying it is damaged, then what is left of it", got, err)
					}
				case "lost":
					if !errors.Is(err, fs.ErrNotExist) && !strings.HasPrefix(got, damagedMark) {
						t.Errorf("log of run 3 = %q, %v; want none, or marked as damaged", got, err)
					}
				}
			}
			check(s, 1, 2, 4, 5)

			// The page the admin reads says so on its first line.
			if tt.want == "damaged" {
				src, err := s.Find("", 3)
				if err != nil {
					t.Fatal(err)
				}
				page, err := ReadPage(src, 1, PageMaxLines, PageMaxBytes, true)
				src.Close()
				if err != nil || !strings.HasPrefix(page.Content, damagedMark) || !page.End {
					t.Errorf("page of run 3 = %+v, %v; want it to start with the damage", page, err)
				}
			}

			// A restarted executor appends to the segment: the damage stays
			// skipped, nothing good is cut, the new record reads.
			next := newTestStore(t, dir, time.Now)
			if err := writeLog(next, 6, segmentLogBody(6)); err != nil {
				t.Fatal(err)
			}
			check(next, 1, 2, 4, 5, 6)
		})
	}
}

// slicesInsert returns s with v inserted at i, in a new slice.
func slicesInsert(s []byte, i int, v []byte) []byte {
	return append(append(append([]byte(nil), s[:i]...), v...), s[i:]...)
}

// TestLogSegmentRandomDamage damages a segment at random places: every
// record whose bytes the damage does not touch reads whole, and every
// other reads marked as damaged or not at all.
func TestLogSegmentRandomDamage(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(1, 2))
	const records = 20
	for round := range 300 {
		s := newTestStore(t, t.TempDir(), time.Now)
		var seg []byte
		var starts []int // where each record starts; records are runs 1..records
		bodies := []string{""}
		for id := int64(1); id <= records; id++ {
			starts = append(starts, len(seg))
			bodies = append(bodies, strings.Repeat(segmentLogBody(id), 1+rng.IntN(3)))
			seg = appendRecord(seg, id, []byte(bodies[id]))
		}
		starts = append(starts, len(seg))
		touched := make([]bool, records+1)
		var ops []string
		// Positions are taken from the end towards the start, so that each
		// one is where it was in the undamaged segment.
		pos := len(seg)
		for range 1 + rng.IntN(3) {
			prev := pos
			pos = rng.IntN(pos)
			if pos == 0 {
				break
			}
			rec := 0
			for rec+1 < len(starts) && starts[rec+1] <= pos {
				rec++
			}
			switch op := rng.IntN(3); op {
			case 0:
				seg[pos] ^= byte(1 + rng.IntN(255))
				touched[rec+1] = true
				ops = append(ops, fmt.Sprintf("flip at %d", pos))
			case 1:
				n := min(1+rng.IntN(40), prev-pos)
				seg = append(seg[:pos:pos], seg[pos+n:]...)
				for r := rec; r < records && starts[r] < pos+n; r++ {
					touched[r+1] = true
				}
				ops = append(ops, fmt.Sprintf("cut %d at %d", n, pos))
			case 2:
				seg = slicesInsert(seg, pos, []byte("\x00garbage #carillon-log \n"[:1+rng.IntN(24)]))
				touched[rec+1] = touched[rec+1] || starts[rec] != pos // between two records touches neither
				ops = append(ops, fmt.Sprintf("insert at %d", pos))
			}
		}
		if err := os.MkdirAll(s.dayPath(s.Today(), ""), 0o750); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(s.segmentPath(s.Today(), 1), seg, 0o640); err != nil {
			t.Fatal(err)
		}
		for id := int64(1); id <= records; id++ {
			got, err := readSegmentLog(s, id)
			if !touched[id] && (err != nil || got != bodies[id]) {
				t.Fatalf("round %d (%s): untouched run %d reads %q, %v; want it whole", round, strings.Join(ops, ", "), id, got, err)
			}
			if touched[id] && err == nil && !strings.HasPrefix(got, damagedMark) {
				t.Fatalf("round %d (%s): damaged run %d reads %q with no mark of the damage", round, strings.Join(ops, ", "), id, got)
			}
		}
	}
}

func TestLogSegmentTornTailAfterDamage(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	s := newTestStore(t, dir, time.Now)
	for id := int64(1); id <= 3; id++ {
		if err := writeLog(s, id, segmentLogBody(id)); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	p := s.segmentPath(s.Today(), 1)
	seg, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	seg[bytes.Index(seg, []byte(segmentLogBody(2)))+5] ^= 1 // run 2's log
	torn := appendRecord(nil, 4, []byte(segmentLogBody(4)))
	seg = append(seg, torn[:len(torn)-20]...) // a process died appending run 4's
	if err := os.WriteFile(p, seg, 0o640); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Find("", 4); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("find of a torn record = %v, want fs.ErrNotExist", err)
	}

	next := newTestStore(t, dir, time.Now)
	if err := writeLog(next, 5, segmentLogBody(5)); err != nil {
		t.Fatal(err)
	}
	for _, id := range []int64{1, 3, 5} {
		if got, err := readSegmentLog(next, id); err != nil || got != segmentLogBody(id) {
			t.Errorf("log of run %d = %q, %v; want it whole", id, got, err)
		}
	}
	if got, err := readSegmentLog(next, 2); err != nil || !strings.HasPrefix(got, damagedMark) {
		t.Errorf("log of run 2 = %q, %v; want it marked as damaged", got, err)
	}
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(b, torn[:len(torn)-20]) || !bytes.Contains(b, []byte(segmentLogBody(3))) {
		t.Errorf("segment after reopening = %q; want the torn record cut, the damaged one and those after it kept", b)
	}
}
