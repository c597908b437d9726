package runlog

import (
	"bytes"
	"testing"
)

// FuzzLogSegment: scanning a segment never panics and finds records only
// within it, whatever it holds; and the records appendRecord wrote read
// back whole and checked, whatever bytes (a torn or damaged record, or
// another process's) follow them. The seeds are segments as the store
// writes them.
func FuzzLogSegment(f *testing.F) {
	good := appendRecord(nil, 3, []byte("a third log\n"))
	f.Add([]byte("hello\n"), []byte("second log\nwith two lines\n"), []byte(nil))
	f.Add([]byte{}, []byte("after an end mark\n"), good)
	f.Add([]byte("x"), []byte("y\n"), good[:len(good)-4])                                 // torn by a crash
	f.Add([]byte("x"), []byte("y\n"), append([]byte("#carillon-log 9 1 0 0\n"), good...)) // a bad header, then a good record
	f.Fuzz(func(t *testing.T, a, b, tail []byte) {
		scanWithin(t, tail)
		seg := appendRecord(appendRecord(nil, 1, a), 2, b)
		seg = append(seg, tail...)
		got := scanWithin(t, seg)
		for id, want := range map[int64][]byte{1: a, 2: b} {
			if body, ok := got[id]; !ok || !bytes.Equal(body, want) {
				t.Errorf("log of run %d = %q (found %v), want %q", id, body, ok, want)
			}
		}
	})
}

// scanWithin scans segment seg, failing the test for a record found
// outside it, and returns the first checked body of each run.
func scanWithin(t *testing.T, seg []byte) map[int64][]byte {
	t.Helper()
	got := make(map[int64][]byte)
	r := bytes.NewReader(seg)
	_, err := scanSegment(r, int64(len(seg)), func(rec recordSpan) bool {
		if rec.off < 0 || rec.n < 0 || rec.off+rec.n > int64(len(seg)) {
			t.Fatalf("record %+v outside the segment's %d bytes", rec, len(seg))
		}
		if _, seen := got[rec.runID]; seen || rec.damage != "" || rec.runID == 0 {
			return true
		}
		if ok, err := checkRecord(r, rec); err != nil {
			t.Fatal(err)
		} else if ok {
			got[rec.runID] = seg[rec.off : rec.off+rec.n]
		}
		return true
	})
	if err != nil {
		t.Fatalf("scan: %v", err)
	}
	return got
}
