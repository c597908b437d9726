package runlog

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"hash/crc32"
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
//	<dir>/<YYYY-MM-DD>/<run id / 1000>.seg2
//
// A record is a header line, then the log's bytes:
//
//	#carillon-log <run id> <length> <body crc> <header crc>\n<length bytes>
//
// The checksums are CRC-32C (Castagnoli) in 8 lowercase hex digits: the
// body crc of the log's bytes, the header crc of the header before it,
// its space included. A reader trusts no header whose checksum fails, so a
// damaged length never sends it past good records. Where the next record
// should start but no good header is, the record before is damaged if its
// body fails its checksum (then it ends where the next good header
// begins), else the damage starts there; either way the reader looks for
// the next good header and goes on: the records after the damage are read
// as if there was none. The log of a run whose record is damaged reads
// with a line saying so first (see damageNote). Damaged bytes that say
// whose they are not are skipped.
//
// A run whose log has a file of its own gets an empty record when it ends:
// its end mark (see [logStore.logStates]); its log is read from its file.
//
// A record is appended whole with one write, under the segment's mutex. A
// process that dies in the middle of an append leaves a torn last record:
// whenever a process opens a segment to append to it (the first time, or
// again after closing it), it checks the records and cuts such a tail off,
// and with it any damaged bytes at the end that are no run's, so that the
// records appended next start clean. Damage before the last good record is
// left as it is, to be skipped by readers.

// segmentExt ends the name of a segment file.
const segmentExt = ".seg2"

// recordMagic starts every record header.
const recordMagic = "#carillon-log "

// recordHeaderMax is the longest a record header can be: the magic, two
// int64s, two checksums, the spaces and the newline.
const recordHeaderMax = len(recordMagic) + 20 + 1 + 20 + 1 + 8 + 1 + 8 + 1

// crcTable computes the checksums of records: CRC-32C, which amd64 and
// arm64 compute in hardware.
var crcTable = crc32.MakeTable(crc32.Castagnoli)

// maxOpenSegments bounds the segment files kept open for appending; the
// least recently used is closed when one more is needed. Runs are
// numbered in order, so the runs ending at any moment use a few segments.
const maxOpenSegments = 32

// appendRecord appends a whole record, header and body, to dst.
func appendRecord(dst []byte, runID int64, body []byte) []byte {
	start := len(dst)
	dst = append(dst, recordMagic...)
	dst = strconv.AppendInt(dst, runID, 10)
	dst = append(dst, ' ')
	dst = strconv.AppendInt(dst, int64(len(body)), 10)
	dst = append(dst, ' ')
	dst = appendHex32(dst, crc32.Checksum(body, crcTable))
	dst = append(dst, ' ')
	dst = appendHex32(dst, crc32.Checksum(dst[start:], crcTable))
	dst = append(dst, '\n')
	return append(dst, body...)
}

// appendHex32 appends v as 8 lowercase hex digits.
func appendHex32(dst []byte, v uint32) []byte {
	const digits = "0123456789abcdef"
	for shift := 28; shift >= 0; shift -= 4 {
		dst = append(dst, digits[v>>shift&0xf])
	}
	return dst
}

// recordHeader is a parsed record header.
type recordHeader struct {
	runID, n int64  // the run, the length of its log
	crc      uint32 // the checksum of the log's bytes
}

// parseRecordHeader parses a record header without its newline; ok is
// false when line is no header or its checksum fails.
func parseRecordHeader(line []byte) (h recordHeader, ok bool) {
	const sumLen = 8
	rest, ok := bytes.CutPrefix(line, []byte(recordMagic))
	if !ok || len(rest) < 1+sumLen || rest[len(rest)-1-sumLen] != ' ' {
		return h, false
	}
	sum, err := strconv.ParseUint(string(rest[len(rest)-sumLen:]), 16, 32)
	if err != nil || crc32.Checksum(line[:len(line)-sumLen], crcTable) != uint32(sum) {
		return h, false
	}
	id, rest, ok1 := bytes.Cut(rest[:len(rest)-1-sumLen], []byte{' '})
	size, body, ok2 := bytes.Cut(rest, []byte{' '})
	runID, err1 := strconv.ParseInt(string(id), 10, 64)
	n, err2 := strconv.ParseInt(string(size), 10, 64)
	crc, err3 := strconv.ParseUint(string(body), 16, 32)
	if !ok1 || !ok2 || err1 != nil || err2 != nil || err3 != nil || runID <= 0 || n < 0 {
		return h, false
	}
	return recordHeader{runID: runID, n: n, crc: uint32(crc)}, true
}

// recordSpan is a run's record in a segment, as scanSegment found it.
type recordSpan struct {
	runID  int64  // 0 for damaged bytes that say whose they are not
	off, n int64  // where the log's bytes are
	crc    uint32 // their checksum, from a good header
	// damage says what is wrong with the record; "" when nothing is known
	// to be (its body is checked by whoever reads it).
	damage string
	// goodHeader says the record's header is good, and so its run id.
	goodHeader bool
}

// headerState says what is at an offset of a segment.
type headerState int

const (
	headerGood headerState = iota // a good record header, whose record fits in the segment
	headerBad                     // no record header, or a damaged one
	headerTorn                    // the start of a record the segment ends within
	headerEnd                     // the end of the segment
)

// segmentReader reads a segment through a window of its bytes.
type segmentReader struct {
	r      io.ReaderAt
	size   int64
	buf    []byte
	win    []byte // the bytes of the segment at winOff, read last
	winOff int64
}

// at returns bytes of the segment from off, at least want of them unless
// the segment ends sooner.
func (sr *segmentReader) at(off int64, want int) ([]byte, error) {
	if off >= sr.size {
		return nil, nil
	}
	end := sr.winOff + int64(len(sr.win))
	if off < sr.winOff || off >= end || (end-off < int64(want) && end < sr.size) {
		k, err := sr.r.ReadAt(sr.buf[:min(int64(len(sr.buf)), sr.size-off)], off)
		if err != nil && !errors.Is(err, io.EOF) {
			return nil, err
		}
		sr.win, sr.winOff = sr.buf[:k], off
	}
	return sr.win[off-sr.winOff:], nil
}

// header reads the record header at off; body is where its log starts.
func (sr *segmentReader) header(off int64) (h recordHeader, body int64, state headerState, err error) {
	if off >= sr.size {
		return h, off, headerEnd, nil
	}
	b, err := sr.at(off, recordHeaderMax)
	if err != nil {
		return h, off, headerBad, err
	}
	b = b[:min(len(b), recordHeaderMax)]
	i := bytes.IndexByte(b, '\n')
	if i < 0 {
		if off+int64(len(b)) == sr.size && (bytes.HasPrefix(b, []byte(recordMagic)) || strings.HasPrefix(recordMagic, string(b))) {
			return h, off, headerTorn, nil
		}
		return h, off, headerBad, nil
	}
	h, ok := parseRecordHeader(b[:i])
	body = off + int64(i) + 1
	switch {
	case !ok:
		return h, off, headerBad, nil
	case h.n > sr.size-body:
		return h, body, headerTorn, nil
	}
	return h, body, headerGood, nil
}

// resync returns the first offset from off where a good or torn record
// header is, the header and where its body starts; the end of the segment
// and headerEnd when there is none.
func (sr *segmentReader) resync(off int64) (next int64, h recordHeader, body int64, state headerState, err error) {
	for off < sr.size {
		b, err := sr.at(off, recordHeaderMax)
		if err != nil {
			return off, h, off, headerBad, err
		}
		i := bytes.Index(b, []byte(recordMagic))
		if i < 0 {
			if off+int64(len(b)) == sr.size {
				break // a torn magic at the end is damage like any other there
			}
			off += int64(max(len(b)-len(recordMagic)+1, 1)) // a magic may straddle the window's end
			continue
		}
		off += int64(i)
		if h, body, state, err = sr.header(off); err != nil || state != headerBad {
			return off, h, body, state, err
		}
		off++
	}
	return sr.size, h, sr.size, headerEnd, nil
}

// damaged describes the damaged bytes [off, next) of a segment, in which
// no good record header is: a record whose header is damaged (runID is
// what it seems to say, if anything) or bytes that are no record.
func (sr *segmentReader) damaged(off, next int64) (recordSpan, error) {
	span := recordSpan{off: off, n: next - off, damage: "damaged bytes that are no run's record"}
	b, err := sr.at(off, recordHeaderMax)
	if err != nil {
		return span, err
	}
	b = b[:min(len(b), recordHeaderMax, int(next-off))]
	rest, ok := bytes.CutPrefix(b, []byte(recordMagic))
	line, _, nl := bytes.Cut(rest, []byte{'\n'})
	id, _, _ := bytes.Cut(line, []byte{' '})
	if runID, err := strconv.ParseInt(string(id), 10, 64); ok && nl && err == nil && runID > 0 {
		body := off + int64(len(recordMagic)+len(line)) + 1
		span = recordSpan{runID: runID, off: body, n: next - body,
			damage: fmt.Sprintf("its header is damaged, and seems to be of run %d", runID)}
	}
	return span, nil
}

// scanSegment reads the records of the first size bytes of a segment and
// calls fn with each, damaged ones included, in order, until fn returns
// false. It checks the body of a record whose header is good only when the
// bytes after it are no good header. It returns the offset after the last
// record it found, damaged or not, where a torn record or damaged bytes
// that are no run's may follow: size, unless the segment ends with such.
func scanSegment(r io.ReaderAt, size int64, fn func(recordSpan) bool) (end int64, err error) {
	if fn == nil {
		fn = func(recordSpan) bool { return true }
	}
	sr := &segmentReader{r: r, size: size, buf: make([]byte, 16<<10)}
	h, body, state, err := sr.header(0)
	if err != nil {
		return 0, err
	}
	off := int64(0)
	for {
		switch state {
		case headerEnd, headerTorn:
			return end, nil
		case headerBad:
			next, nh, nbody, nstate, err := sr.resync(off + 1)
			if err != nil {
				return end, err
			}
			span, err := sr.damaged(off, next)
			if err != nil {
				return end, err
			}
			if span.runID != 0 {
				end = next
			}
			if !fn(span) {
				return end, nil
			}
			off, h, body, state = next, nh, nbody, nstate
			continue
		}
		next := body + h.n
		nh, nbody, nstate, err := sr.header(next)
		if err != nil {
			return end, err
		}
		span := recordSpan{runID: h.runID, off: body, n: h.n, crc: h.crc, goodHeader: true}
		if nstate == headerBad {
			ok, err := checkRecord(r, span)
			if err != nil {
				return end, err
			}
			if !ok { // the record is damaged, maybe in its length: it ends where the next one starts
				if next, nh, nbody, nstate, err = sr.resync(body); err != nil {
					return end, err
				}
				span.n, span.damage = next-body, "its log fails its checksum"
			}
		}
		end = body + span.n
		if !fn(span) {
			return end, nil
		}
		off, h, body, state = next, nh, nbody, nstate
	}
}

// checkRecord says whether the log's bytes of span, a record whose header
// is good, match their checksum.
func checkRecord(r io.ReaderAt, span recordSpan) (bool, error) {
	buf := make([]byte, min(span.n, 32<<10))
	var crc uint32
	for off := int64(0); off < span.n; {
		k, err := r.ReadAt(buf[:min(int64(len(buf)), span.n-off)], span.off+off)
		crc = crc32.Update(crc, crcTable, buf[:k])
		off += int64(k)
		if err != nil && (!errors.Is(err, io.EOF) || off < span.n) {
			return false, err
		}
	}
	return crc == span.crc, nil
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
func (s *Store) segmentPath(dir string, runID int64) string {
	return s.dayPath(dir, strconv.FormatInt(runID/1000, 10)+segmentExt)
}

// appendRecord appends runID's log to its segment in the run directory dir
// in one write.
func (s *Store) appendRecord(dir string, runID int64, body []byte) error {
	rec := appendRecord(make([]byte, 0, recordHeaderMax+len(body)), runID, body)
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
func (s *Store) appendRecords(recs []logRecord) error {
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
func (s *Store) writeSegment(day, p string, recs []byte) error {
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
func (s *Store) segment(day, p string) (*segmentFile, error) {
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
func (s *Store) forgetSegment(p string, sf *segmentFile) {
	s.segMu.Lock()
	defer s.segMu.Unlock()
	if s.segs[p] == sf {
		delete(s.segs, p)
	}
}

// closeDay closes the open segments of day, its databases' included,
// before the day is removed.
func (s *Store) closeDay(day string) {
	s.segMu.Lock()
	defer s.segMu.Unlock()
	for p, sf := range s.segs {
		if sf.day == day || strings.HasPrefix(sf.day, day+string(filepath.Separator)) {
			_ = sf.close()
			delete(s.segs, p)
		}
	}
}

// Close closes every open segment; a later append opens its segment again.
func (s *Store) Close() error {
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
func (s *Store) openSegment(p string) (*os.File, error) {
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

// segmentRecord opens the log of runID in its segment in the run directory
// dir, or fails with an error
// wrapping [fs.ErrNotExist]. When the run's record is damaged and it has
// no good one, what is left of the record is read, after a line saying so
// (see damageNote).
func (s *Store) segmentRecord(dir string, runID int64) (io.ReadCloser, error) {
	p := s.segmentPath(dir, runID)
	f, err := os.Open(p)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	var damaged *recordSpan
	if err == nil {
		span, found, err := findRecord(f, runID)
		switch {
		case err != nil:
			_ = f.Close()
			return nil, err
		case found && span.damage == "":
			return readCloser{io.NewSectionReader(f, span.off, span.n), f}, nil
		case found:
			damaged = &span
		default:
			_ = f.Close()
		}
	}
	if damaged == nil {
		return nil, fmt.Errorf("log of run %d in %s: %w", runID, p, fs.ErrNotExist)
	}
	note := strings.NewReader(damageNote(p, damaged.damage))
	return readCloser{io.MultiReader(note, io.NewSectionReader(f, damaged.off, damaged.n)), f}, nil
}

// findRecord finds the record of runID in the segment f: the first good
// one, or else the first damaged one.
func findRecord(f *os.File, runID int64) (span recordSpan, found bool, err error) {
	fi, err := f.Stat()
	if err != nil {
		return span, false, err
	}
	var checkErr error
	_, err = scanSegment(f, fi.Size(), func(rec recordSpan) bool {
		if rec.runID != runID {
			return true
		}
		if rec.damage == "" {
			var ok bool
			if ok, checkErr = checkRecord(f, rec); checkErr != nil {
				return false
			}
			if ok {
				span, found = rec, true
				return false
			}
			rec.damage = "its log fails its checksum"
		}
		if !found {
			span, found = rec, true
		}
		return true
	})
	return span, found, cmp.Or(err, checkErr)
}

// damageNote is the line a damaged record's log reads with first: where
// the record is and what is wrong with it.
func damageNote(p, damage string) string {
	return fmt.Sprintf("----- the record of this log in %s is damaged (%s): the lines below are what is left of it, and may be wrong or cut\n", p, damage)
}

// segmentRunIDs returns the run ids of the records in the segment of
// runID's bucket in the run directory dir; those of damaged records only when their header is good.
func (s *Store) segmentRunIDs(dir string, runID int64) ([]int64, error) {
	var ids []int64
	err := withSegment(s.segmentPath(dir, runID), func(f *os.File, size int64) error {
		_, err := scanSegment(f, size, func(rec recordSpan) bool {
			if rec.goodHeader {
				ids = append(ids, rec.runID)
			}
			return true
		})
		return err
	})
	return ids, err
}

// withSegment calls fn with the segment at p open, and its size; it does
// nothing if there is none.
func withSegment(p string, fn func(f *os.File, size int64) error) error {
	f, err := os.Open(p)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	defer func() { _ = f.Close() }()
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	return fn(f, fi.Size())
}

// readCloser reads from a file, or a part of it, and closes the file.
type readCloser struct {
	io.Reader
	io.Closer
}
