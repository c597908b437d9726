package report

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	carillonv1 "github.com/carillonhq/carillon/proto/carillon/v1"
)

// spoolSegmentLines is how many lines a spool segment gets before the
// spool starts the next one.
const spoolSegmentLines = 4096

// Spool keeps every result on disk from the moment its run ends until the
// admin acknowledges it, so that no result is lost to an admin outage or an
// executor restart. It appends to segment files, numbered in order, one
// JSON record a line:
//
//	<dir>/<seq>.Spool
//
//	{"run_id":42,"status":"RUN_STATUS_SUCCEEDED","finished_at":"2026-01-02T03:04:05Z"}
//	{"run_id":42,"database_id":"9f0c…","status":"RUN_STATUS_FAILED","message":"boom","finished_at":"2026-01-02T03:04:06Z"}
//	{"ack":[41,42]}
//	{"database_id":"9f0c…","ack":[42]}
//
// A line is a result (a later one for the same run replaces it) or the
// acknowledgement of a delivered batch, so a result costs one write, a
// delivered batch one more, and no file is created or removed per result.
// A run is its run id and its database id (see runKey): without a
// database_id, the line is of a run without one, as all lines of earlier
// versions.
//
// The Spool remembers where each unacknowledged result is, not the result:
// during a long admin outage results wait on disk only. Segments are
// deleted from the oldest while every result in them is acknowledged (or
// replaced). An ack line refers to results of its own or earlier segments
// only, so deleting such a prefix never loses an ack that a remaining
// segment needs.
//
// On open, the segments are read in order to rebuild the unacknowledged
// results, and appends go to a new segment, so the torn last line a crash
// may leave never runs into new lines. A line that does not decode is
// skipped and logged.
type Spool struct {
	Dir      string
	logger   *slog.Logger
	maxLines int // lines per segment; spoolSegmentLines but in tests

	mu      sync.Mutex
	segs    []*spoolSegment  // every segment file, oldest first
	cur     *os.File         // the last segment, open for appending; nil until the next append opens a new one
	size    int64            // bytes in cur
	lines   int              // lines in cur
	nextSeq int64            // number of the next segment
	pending map[Key]spoolRef // where each unacknowledged result is, by run
}

// spoolSegment counts the unacknowledged results of a segment file, and
// lists the results tracked in it in the order of their lines, so that
// load finds the oldest unacknowledged ones without sorting them all.
type spoolSegment struct {
	seq     int64
	unacked int
	lines   []spoolLine // the results tracked in it, in order of offset
	first   int         // the lines before it are acknowledged or replaced
}

// spoolLine is a result line of a segment: its run and offset. It is the
// run's unacknowledged result while s.pending holds that offset for it.
type spoolLine struct {
	run Key
	off int64
}

// spoolRef is where an unacknowledged result is: a line of a segment.
type spoolRef struct {
	seg *spoolSegment
	off int64
	n   int // with the newline
}

// spooled is the on-disk form of a line: a result, or an ack.
type spooled struct {
	RunID      int64             `json:"run_id,omitempty"`
	DatabaseID string            `json:"database_id,omitempty"`
	Status     string            `json:"status,omitempty"`
	Message    string            `json:"message,omitempty"`
	FinishedAt time.Time         `json:"finished_at,omitzero"`
	StartedAt  time.Time         `json:"started_at,omitzero"`
	Outputs    map[string]string `json:"outputs,omitempty"` // absent from the lines of executors that predate it
	Ack        []int64           `json:"ack,omitempty"`     // run ids whose results the admin took
}

// appendResultLine appends r as a spool line: the JSON of spooled, as
// encoding/json writes it, and a newline; written by hand because it is
// on every run's path, where reflection cost more than the write.
func appendResultLine(b []byte, r Result) []byte {
	b = append(b, `{"run_id":`...)
	b = strconv.AppendInt(b, r.RunID, 10)
	if r.DatabaseID != "" {
		b = append(b, `,"database_id":`...)
		b = appendJSONString(b, r.DatabaseID)
	}
	b = append(b, `,"status":`...)
	b = appendJSONString(b, r.Status.String())
	if r.Message != "" {
		b = append(b, `,"message":`...)
		b = appendJSONString(b, r.Message)
	}
	if !r.FinishedAt.IsZero() {
		b = append(b, `,"finished_at":"`...)
		b = append(r.FinishedAt.AppendFormat(b, time.RFC3339Nano), '"')
	}
	if !r.StartedAt.IsZero() {
		b = append(b, `,"started_at":"`...)
		b = append(r.StartedAt.AppendFormat(b, time.RFC3339Nano), '"')
	}
	if len(r.Outputs) > 0 {
		o, _ := json.Marshal(r.Outputs) // a map of strings always marshals
		b = append(append(b, `,"outputs":`...), o...)
	}
	return append(b, "}\n"...)
}

// appendJSONString appends s as a JSON string: as is when it needs no
// escaping, as most statuses and messages, else by encoding/json.
func appendJSONString(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			q, _ := json.Marshal(s) // a string always marshals
			return append(b, q...)
		}
	}
	return append(append(append(b, '"'), s...), '"')
}

// result checks a result line and returns its result.
func (sp spooled) result() (Result, error) {
	status, ok := carillonv1.RunStatus_value[sp.Status]
	if !ok || sp.RunID <= 0 {
		return Result{}, fmt.Errorf("bad run id %d or status %q", sp.RunID, sp.Status)
	}
	return Result{RunID: sp.RunID, DatabaseID: sp.DatabaseID, Status: carillonv1.RunStatus(status), Message: sp.Message, FinishedAt: sp.FinishedAt,
		StartedAt: sp.StartedAt, Outputs: sp.Outputs}, nil
}

// OpenSpool opens the spool in dir, creating dir if needed: it reads the
// segments a previous process left, deletes those whose every result was
// acknowledged, and moves in the results an older executor left one file
// per result. What cannot be read is logged to logger and skipped.
func OpenSpool(dir string, logger *slog.Logger) (*Spool, error) {
	if err := os.MkdirAll(dir, 0o750); err != nil {
		return nil, err
	}
	s := &Spool{Dir: dir, logger: logger, maxLines: spoolSegmentLines, nextSeq: 1, pending: make(map[Key]spoolRef)}
	old, err := s.replay()
	if err != nil {
		return nil, err
	}
	if err := s.trim(); err != nil {
		return nil, err
	}
	s.migrate(old)
	return s, nil
}

// segmentPath is the path of segment seq.
func (s *Spool) segmentPath(seq int64) string {
	return filepath.Join(s.Dir, fmt.Sprintf("%016d.spool", seq))
}

// replay reads every segment in dir, oldest first, into s.pending and
// s.segs, and removes the temporary files an older executor's crash left.
// It returns the result files of an older executor, for migrate.
func (s *Spool) replay() (oldFiles []string, err error) {
	entries, err := os.ReadDir(s.Dir)
	if err != nil {
		return nil, err
	}
	var seqs []int64
	for _, e := range entries {
		name := e.Name()
		switch {
		case strings.HasSuffix(name, ".spool"):
			seq, err := strconv.ParseInt(strings.TrimSuffix(name, ".spool"), 10, 64)
			if err == nil && seq > 0 {
				seqs = append(seqs, seq)
			}
		case strings.HasSuffix(name, ".json"):
			oldFiles = append(oldFiles, filepath.Join(s.Dir, name))
		case strings.HasSuffix(name, ".tmp"):
			_ = os.Remove(filepath.Join(s.Dir, name))
		}
	}
	slices.Sort(seqs)
	for _, seq := range seqs {
		if err := s.replaySegment(seq); err != nil {
			return nil, err
		}
		s.nextSeq = seq + 1
	}
	return oldFiles, nil
}

// replaySegment applies the lines of segment seq.
func (s *Spool) replaySegment(seq int64) error {
	seg := &spoolSegment{seq: seq}
	s.segs = append(s.segs, seg)
	f, err := os.Open(s.segmentPath(seq))
	if err != nil {
		return err
	}
	defer func() { _ = f.Close() }()
	r := bufio.NewReaderSize(f, 64<<10)
	var off int64
	for {
		line, err := r.ReadBytes('\n')
		switch {
		case len(line) > 0 && line[len(line)-1] == '\n':
			if derr := s.apply(seg, off, line); derr != nil {
				s.logger.Error("sdk: spooled line skipped", "file", f.Name(), "offset", off, "err", derr)
			}
		case len(line) > 0:
			s.logger.Warn("sdk: torn last spooled line skipped (a crash cut it)", "file", f.Name(), "offset", off, "bytes", len(line))
		}
		off += int64(len(line))
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
	}
}

// apply applies one line of seg, at off, to s.pending.
func (s *Spool) apply(seg *spoolSegment, off int64, line []byte) error {
	var sp spooled
	if err := json.Unmarshal(line, &sp); err != nil {
		return err
	}
	if sp.Ack != nil {
		for _, id := range sp.Ack {
			s.forget(Key{sp.DatabaseID, id})
		}
		return nil
	}
	if _, err := sp.result(); err != nil {
		return err
	}
	s.track(Key{sp.DatabaseID, sp.RunID}, spoolRef{seg: seg, off: off, n: len(line)})
	return nil
}

// track records where the result of run k is, replacing an earlier one.
func (s *Spool) track(k Key, ref spoolRef) {
	s.forget(k)
	ref.seg.unacked++
	ref.seg.lines = append(ref.seg.lines, spoolLine{k, ref.off})
	s.pending[k] = ref
}

// forget drops the result of run k, if any, from the unacknowledged ones.
func (s *Spool) forget(k Key) {
	if ref, ok := s.pending[k]; ok {
		ref.seg.unacked--
		delete(s.pending, k)
	}
}

// Has says whether the result of run k waits for an acknowledgement.
func (s *Spool) Has(k Key) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, ok := s.pending[k]
	return ok
}

// Keys returns the runs whose results wait for an acknowledgement.
func (s *Spool) Keys() []Key {
	s.mu.Lock()
	defer s.mu.Unlock()
	keys := make([]Key, 0, len(s.pending))
	for k := range s.pending {
		keys = append(keys, k)
	}
	return keys
}

// migrate moves the results an older executor left, one file each, into
// the spool, and deletes the files; it sets aside, as *.bad, those that do
// not decode.
func (s *Spool) migrate(files []string) {
	for _, p := range files {
		var sp spooled
		b, err := os.ReadFile(p)
		if err == nil {
			err = json.Unmarshal(b, &sp)
		}
		var r Result
		if err == nil {
			r, err = sp.result()
		}
		if err == nil {
			err = s.put(r)
		}
		if err != nil {
			s.logger.Error("sdk: spooled result set aside", "file", p+".bad", "err", err)
			_ = os.Rename(p, p+".bad")
			continue
		}
		_ = os.Remove(p)
	}
}

// put spools one result: see putAll.
func (s *Spool) put(r Result) error { return s.putAll([]Result{r}) }

// putAll stores results, each replacing an earlier result of the same
// run, with one write.
func (s *Spool) putAll(rs []Result) error {
	var buf []byte
	ends := make([]int, len(rs))
	for i, r := range rs {
		buf = appendResultLine(buf, r)
		ends[i] = len(buf)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	refs, err := s.appendLines(buf, ends)
	if err != nil {
		return fmt.Errorf("spool results of %d runs from run %d: %w", len(rs), rs[0].RunID, err)
	}
	for i, r := range rs {
		s.track(r.key(), refs[i])
	}
	return nil
}

// ack forgets the acknowledged results of runs with one write (an ack line
// per database), and deletes the oldest segments once all their results
// are acknowledged. When the write fails the results are forgotten all the
// same: they may be delivered again after a restart.
func (s *Spool) ack(runs []Key) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	var dbs []string // in the order first seen
	acked := make(map[string][]int64)
	for _, k := range runs {
		if _, ok := s.pending[k]; ok {
			if _, seen := acked[k.DB]; !seen {
				dbs = append(dbs, k.DB)
			}
			acked[k.DB] = append(acked[k.DB], k.ID)
		}
	}
	if len(dbs) == 0 {
		return nil
	}
	var lines []byte
	var ends []int
	var err error
	for _, db := range dbs {
		line, merr := json.Marshal(spooled{DatabaseID: db, Ack: acked[db]})
		if merr != nil {
			err = merr
			break
		}
		lines = append(append(lines, line...), '\n')
		ends = append(ends, len(lines))
	}
	if err == nil {
		_, err = s.appendLines(lines, ends)
	}
	for _, db := range dbs {
		for _, id := range acked[db] {
			s.forget(Key{db, id})
		}
	}
	return errors.Join(err, s.trim())
}

// appendLines appends lines, whole lines each ending at its offset in
// ends, with one write, to the current segment, opening a new one if there
// is none, and returns where each went; s.mu is held. After a failed write
// (which may leave a torn line) and after maxLines lines, the next append
// goes to a new segment.
func (s *Spool) appendLines(lines []byte, ends []int) ([]spoolRef, error) {
	if s.cur == nil {
		f, err := os.OpenFile(s.segmentPath(s.nextSeq), os.O_WRONLY|os.O_CREATE|os.O_EXCL|os.O_APPEND, 0o640) //nolint:gosec // run logs are read by operators' tools, like any service log
		if err != nil {
			return nil, err
		}
		s.segs = append(s.segs, &spoolSegment{seq: s.nextSeq})
		s.nextSeq++
		s.cur, s.size, s.lines = f, 0, 0
	}
	seg := s.segs[len(s.segs)-1]
	refs := make([]spoolRef, len(ends))
	start := 0
	for i, end := range ends {
		refs[i] = spoolRef{seg: seg, off: s.size + int64(start), n: end - start}
		start = end
	}
	_, err := s.cur.Write(lines)
	s.size += int64(len(lines))
	s.lines += len(ends)
	if err != nil || s.lines >= s.maxLines {
		err = errors.Join(err, s.cur.Close())
		s.cur = nil
	}
	if err != nil {
		return nil, err
	}
	return refs, nil
}

// trim deletes segments from the oldest while every result in them is
// acknowledged, but not the segment being appended to; s.mu is held.
func (s *Spool) trim() error {
	for len(s.segs) > 0 && s.segs[0].unacked == 0 && (s.cur == nil || len(s.segs) > 1) {
		err := os.Remove(s.segmentPath(s.segs[0].seq))
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		s.segs = s.segs[1:]
	}
	return nil
}

// load reads up to limit unacknowledged results for which skip is false,
// oldest first; more says whether others remain. A result that cannot be
// read is forgotten and reported in err; loading goes on. It walks the
// segments' lines from the oldest that may be unacknowledged, so a
// backlog of n results is loaded in O(n), not sorted whole at each load
// (sorting half a million at each load took 70 % of an executor's CPU).
func (s *Spool) load(limit int, skip func(Key) bool) (results []Result, more bool, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	type item struct {
		run Key
		ref spoolRef
	}
	var items []item
walk:
	for _, seg := range s.segs {
		for i := seg.first; i < len(seg.lines) && seg.unacked > 0; i++ {
			l := seg.lines[i]
			ref, ok := s.pending[l.run]
			if !ok || ref.seg != seg || ref.off != l.off { // acknowledged or replaced
				if i == seg.first {
					seg.first++
				}
				continue
			}
			if skip(l.run) {
				continue
			}
			if len(items) == limit {
				more = true
				break walk
			}
			items = append(items, item{l.run, ref})
		}
		if seg.unacked == 0 || seg.first == len(seg.lines) {
			seg.lines, seg.first = seg.lines[:0], 0
		}
	}
	var errs []error
	for i := 0; i < len(items); {
		// The items of one segment, in order of offset, with one read of
		// the lines they span, up to loadSpanMax bytes but for one line.
		seg, from := items[i].ref.seg, items[i].ref.off
		j := i + 1
		for j < len(items) && items[j].ref.seg == seg && items[j].ref.off+int64(items[j].ref.n)-from <= loadSpanMax {
			j++
		}
		last := items[j-1].ref
		span, readErr := readSpan(s.segmentPath(seg.seq), from, last.off+int64(last.n)-from)
		for _, it := range items[i:j] {
			err := readErr
			var res Result
			if err == nil {
				res, err = decodeSpooled(span[it.ref.off-from:][:it.ref.n], it.run, it.ref)
			}
			if err != nil {
				errs = append(errs, fmt.Errorf("spooled result of run %d%s: %w", it.run.ID, OfDatabase(it.run.DB), err))
				s.forget(it.run)
				continue
			}
			results = append(results, res)
		}
		i = j
	}
	return results, more, errors.Join(errs...)
}

// loadSpanMax bounds one read of load: the lines of up to a few thousand
// results, or of a few of the largest.
const loadSpanMax = 1 << 20

// readSpan reads n bytes at off of the segment file at path.
func readSpan(path string, off, n int64) ([]byte, error) {
	f, err := os.Open(path) //nolint:gosec // a segment of this executor's own spool
	if err != nil {
		return nil, err
	}
	defer func() { _ = f.Close() }()
	b := make([]byte, n)
	if _, err := f.ReadAt(b, off); err != nil {
		return nil, err
	}
	return b, nil
}

// decodeSpooled decodes line, the result of run k at ref.
func decodeSpooled(line []byte, k Key, ref spoolRef) (Result, error) {
	var sp spooled
	if err := json.Unmarshal(line, &sp); err != nil {
		return Result{}, err
	}
	if sp.RunID != k.ID || sp.DatabaseID != k.DB {
		return Result{}, fmt.Errorf("line at %d holds run %d%s", ref.off, sp.RunID, OfDatabase(sp.DatabaseID))
	}
	return sp.result()
}

// Close closes the segment being appended to, and deletes the segments
// whose every result was acknowledged; the next put opens a new segment.
func (s *Spool) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	var err error
	if s.cur != nil {
		err = s.cur.Close()
		s.cur = nil
	}
	return errors.Join(err, s.trim())
}

// Unacked says how many results wait for the admin's acknowledgement.
func (s *Spool) Unacked() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.pending)
}

// Unacknowledged counts the results the spool in dir holds unacknowledged,
// as a new process would find them, without changing dir: for tests and
// diagnostics, while another process's spool may have it open.
func Unacknowledged(dir string) (int, error) {
	sp := &Spool{Dir: dir, logger: slog.New(slog.DiscardHandler), pending: make(map[Key]spoolRef)}
	if _, err := sp.replay(); err != nil {
		return 0, err
	}
	return len(sp.pending), nil
}
