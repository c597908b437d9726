package sdk

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
)

// A segment file holds the logs of up to 1000 runs accepted the same day,
// one record per run, so that a run whose log stayed in memory costs one
// write to a file that is usually open already, instead of a new file:
//
//	<dir>/<YYYY-MM-DD>/<run id / 1000>.seg
//
// A record is a header line, then the log's bytes:
//
//	#carillon-run <run id> <length>\n<length bytes>
//
// A record is appended whole with one write, under the segment's mutex. A
// process that dies in the middle of an append leaves a torn last record:
// whenever a process opens a segment to append to it (the first time, or
// again after closing it), it checks the records and cuts such a tail off,
// so that the records appended next stay readable. Readers stop at a
// header that does not parse or at a body that is cut short.

// segmentMagic starts every record header.
const segmentMagic = "#carillon-run "

// segmentHeaderMax is the longest a record header can be: the magic, two
// int64s, a space and the newline.
const segmentHeaderMax = len(segmentMagic) + 20 + 1 + 20 + 1

// maxOpenSegments bounds the segment files kept open for appending; the
// least recently used is closed when one more is needed. Runs are
// numbered in order, so the runs ending at any moment use a few segments.
const maxOpenSegments = 32

// appendRecord appends a whole record, header and body, to dst.
func appendRecord(dst []byte, runID int64, body []byte) []byte {
	dst = append(dst, segmentMagic...)
	dst = strconv.AppendInt(dst, runID, 10)
	dst = append(dst, ' ')
	dst = strconv.AppendInt(dst, int64(len(body)), 10)
	dst = append(dst, '\n')
	return append(dst, body...)
}

// parseRecordHeader parses a record header without its newline.
func parseRecordHeader(line []byte) (runID, n int64, ok bool) {
	rest, ok := bytes.CutPrefix(line, []byte(segmentMagic))
	if !ok {
		return 0, 0, false
	}
	id, size, ok := bytes.Cut(rest, []byte{' '})
	if !ok {
		return 0, 0, false
	}
	runID, err1 := strconv.ParseInt(string(id), 10, 64)
	n, err2 := strconv.ParseInt(string(size), 10, 64)
	if err1 != nil || err2 != nil || runID <= 0 || n < 0 {
		return 0, 0, false
	}
	return runID, n, true
}

// scanSegment reads the record headers of the first size bytes of a
// segment, skipping over the bodies, and calls fn with each whole record's
// run id, body offset and body length, in order, until fn returns false.
// It returns the offset where the last whole record it read ends: size,
// unless the segment ends with a torn or unreadable record.
func scanSegment(r io.ReaderAt, size int64, fn func(runID, off, n int64) bool) (end int64, err error) {
	buf := make([]byte, 16<<10)
	var win []byte // the bytes of the segment at winOff, read last
	var winOff, off int64
	for off < size {
		winEnd := winOff + int64(len(win))
		if off >= winEnd || (off+int64(segmentHeaderMax) > winEnd && winEnd < size) {
			k, err := r.ReadAt(buf[:min(int64(len(buf)), size-off)], off)
			if err != nil && !errors.Is(err, io.EOF) {
				return off, err
			}
			win, winOff = buf[:k], off
		}
		head := win[off-winOff:]
		head = head[:min(len(head), segmentHeaderMax)]
		i := bytes.IndexByte(head, '\n')
		if i < 0 {
			return off, nil
		}
		runID, n, ok := parseRecordHeader(head[:i])
		body := off + int64(i) + 1
		if !ok || n > size-body {
			return off, nil
		}
		off = body + n
		if fn != nil && !fn(runID, body, n) {
			return off, nil
		}
	}
	return off, nil
}

// segmentFile is a segment open for appending.
type segmentFile struct {
	mu   sync.Mutex // serializes appends
	f    *os.File   // nil once closed
	day  string     // its run directory (see logStore.runDir)
	used uint64     // logStore.clock at the last use; guarded by logStore.segMu
}

// close closes the file once no append is under way.
func (sf *segmentFile) close() error {
	sf.mu.Lock()
	defer sf.mu.Unlock()
	if sf.f == nil {
		return nil
	}
	err := sf.f.Close()
	sf.f = nil
	return err
}

// segmentPath is the path of the segment of runID's bucket in the run
// directory dir (see logStore.runDir).
func (s *logStore) segmentPath(dir string, runID int64) string {
	return s.dayPath(dir, strconv.FormatInt(runID/1000, 10)+".seg")
}

// appendRecord appends runID's log to its segment in the run directory dir
// in one write.
func (s *logStore) appendRecord(dir string, runID int64, body []byte) error {
	rec := appendRecord(make([]byte, 0, segmentHeaderMax+len(body)), runID, body)
	if err := s.writeSegment(dir, s.segmentPath(dir, runID), rec); err != nil {
		return fmt.Errorf("log of run %d: %w", runID, err)
	}
	return nil
}

// logRecord is a run's log, to append to its segment.
type logRecord struct {
	dir   string // the run directory (see logStore.runDir)
	runID int64
	body  []byte
}

// appendRecords appends the logs of several runs, with one write per
// segment.
func (s *logStore) appendRecords(recs []logRecord) error {
	var order []string // segment paths, in the order first seen
	bufs := map[string][]byte{}
	days := map[string]string{}
	for _, r := range recs {
		p := s.segmentPath(r.dir, r.runID)
		if _, ok := bufs[p]; !ok {
			order = append(order, p)
			days[p] = r.dir
		}
		bufs[p] = appendRecord(bufs[p], r.runID, r.body)
	}
	var errs []error
	for _, p := range order {
		if err := s.writeSegment(days[p], p, bufs[p]); err != nil {
			errs = append(errs, fmt.Errorf("logs in %s: %w", p, err))
		}
	}
	return errors.Join(errs...)
}

// writeSegment appends whole records to the segment of day at p in one
// write.
func (s *logStore) writeSegment(day, p string, recs []byte) error {
	for {
		sf, err := s.segment(day, p)
		if err != nil {
			return err
		}
		sf.mu.Lock()
		if sf.f == nil { // a write to it failed since segment returned it
			sf.mu.Unlock()
			s.forgetSegment(p, sf)
			continue
		}
		_, err = sf.f.Write(recs)
		if err != nil {
			// The records may be torn: the next append opens the segment
			// again, which cuts the torn one off.
			_ = sf.f.Close()
			sf.f = nil
		}
		sf.mu.Unlock()
		if err != nil {
			s.forgetSegment(p, sf)
		}
		return err
	}
}

// segment returns the open segment file at p, opening it if needed and
// closing the least recently used one beyond maxOpenSegments. Segments are
// opened and closed under s.segMu, so that opening one, which may cut a
// torn record off, never overlaps an append to the same file.
func (s *logStore) segment(day, p string) (*segmentFile, error) {
	s.segMu.Lock()
	defer s.segMu.Unlock()
	s.clock++
	if sf, ok := s.segs[p]; ok {
		sf.used = s.clock
		return sf, nil
	}
	f, err := s.openSegment(p)
	if err != nil {
		return nil, err
	}
	sf := &segmentFile{f: f, day: day, used: s.clock}
	if s.segs == nil {
		s.segs = make(map[string]*segmentFile)
	}
	s.segs[p] = sf
	if len(s.segs) > maxOpenSegments {
		var oldest string
		for q, o := range s.segs {
			if oldest == "" || o.used < s.segs[oldest].used {
				oldest = q
			}
		}
		_ = s.segs[oldest].close()
		delete(s.segs, oldest)
	}
	return sf, nil
}

// forgetSegment drops sf, which is at p and closed, from the open segments.
func (s *logStore) forgetSegment(p string, sf *segmentFile) {
	s.segMu.Lock()
	defer s.segMu.Unlock()
	if s.segs[p] == sf {
		delete(s.segs, p)
	}
}

// closeDay closes the open segments of day, its databases' included,
// before the day is removed.
func (s *logStore) closeDay(day string) {
	s.segMu.Lock()
	defer s.segMu.Unlock()
	for p, sf := range s.segs {
		if sf.day == day || strings.HasPrefix(sf.day, day+string(filepath.Separator)) {
			_ = sf.close()
			delete(s.segs, p)
		}
	}
}

// close closes every open segment; a later append opens its segment again.
func (s *logStore) close() error {
	s.segMu.Lock()
	defer s.segMu.Unlock()
	var errs []error
	for p, sf := range s.segs {
		errs = append(errs, sf.close())
		delete(s.segs, p)
	}
	return errors.Join(errs...)
}

// openSegment opens the segment at p for appending, creating it and its
// directory if needed. When the segment exists, it checks its records and
// cuts off a torn last one that a process dying mid-append left.
func (s *logStore) openSegment(p string) (*os.File, error) {
	f, err := s.create(p, os.O_RDWR)
	if err != nil {
		return nil, err
	}
	fi, err := f.Stat()
	if err == nil && fi.Size() > 0 {
		var end int64
		if end, err = scanSegment(f, fi.Size(), nil); err == nil && end < fi.Size() {
			err = f.Truncate(end)
		}
	}
	if err != nil {
		_ = f.Close()
		return nil, err
	}
	return f, nil
}

// segmentRecord opens the record of runID in its segment in the run
// directory dir, or fails with an error wrapping [fs.ErrNotExist].
func (s *logStore) segmentRecord(dir string, runID int64) (io.ReadCloser, error) {
	f, err := os.Open(s.segmentPath(dir, runID))
	if err != nil {
		return nil, err
	}
	fi, err := f.Stat()
	if err != nil {
		_ = f.Close()
		return nil, err
	}
	off, n := int64(-1), int64(0)
	_, err = scanSegment(f, fi.Size(), func(id, o, size int64) bool {
		if id == runID {
			off, n = o, size
		}
		return id != runID
	})
	if err == nil && off < 0 {
		err = fmt.Errorf("log of run %d in %s: %w", runID, f.Name(), fs.ErrNotExist)
	}
	if err != nil {
		_ = f.Close()
		return nil, err
	}
	return sectionCloser{io.NewSectionReader(f, off, n), f}, nil
}

// segmentRunIDs returns the run ids of the records in the segment at p;
// none if it does not exist.
func segmentRunIDs(p string) ([]int64, error) {
	f, err := os.Open(p)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	var ids []int64
	_, err = scanSegment(f, fi.Size(), func(id, _, _ int64) bool {
		ids = append(ids, id)
		return true
	})
	return ids, err
}

// sectionCloser reads a section of a file, and closes the file.
type sectionCloser struct {
	*io.SectionReader
	io.Closer
}
