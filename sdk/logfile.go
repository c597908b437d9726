package sdk

import (
	"bufio"
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
	"unicode/utf8"
)

// Bounds of one page of a run log returned by ReadLog, so that reading the
// log of a run that printed gigabytes costs the executor, the admin and the
// browser no more than one page at a time.
const (
	// LogPageMaxLines is the most lines one page of a run log holds.
	LogPageMaxLines = 1000
	// LogPageMaxBytes is about the most bytes one page of a run log holds. A
	// single line longer than that is cut, and marked as cut.
	LogPageMaxBytes = 256 << 10
)

// logTimeLayout prefixes every line written by Logf and the executor.
const logTimeLayout = "2006-01-02 15:04:05.000"

// dayLayout names a log directory: the UTC day its runs were accepted.
const dayLayout = "2006-01-02"

// runLog is one run's log. Lines are kept in memory and written to the
// run's file in one go when the run ends (or once they pass spillBytes, or
// when someone reads the log or a script needs the file), so a short run
// costs one file write and accepting a run touches no file at all. A nil or
// closed runLog discards writes.
type runLog struct {
	mu     sync.Mutex
	path   string
	open   func(path string) (*os.File, error) // creates the file, for appending
	buf    []byte
	f      *os.File // nil until the log is on disk
	closed bool
	now    func() time.Time
}

// spillBytes is how much of a run's log is kept in memory before it is
// written to its file.
const spillBytes = 64 << 10

func newRunLog(path string, open func(string) (*os.File, error), now func() time.Time) *runLog {
	return &runLog{path: path, open: open, now: now}
}

// Write appends p to the log.
func (l *runLog) Write(p []byte) (int, error) {
	if l == nil {
		return len(p), nil
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return len(p), nil
	}
	if l.f == nil && len(l.buf)+len(p) <= spillBytes {
		l.buf = append(l.buf, p...)
		return len(p), nil
	}
	if err := l.spill(); err != nil {
		return 0, err
	}
	return l.f.Write(p)
}

// spill writes the buffered lines to the file, creating it; l.mu is held.
func (l *runLog) spill() error {
	if l.f != nil {
		return nil
	}
	f, err := l.open(l.path)
	if err != nil {
		return err
	}
	l.f = f
	_, err = f.Write(l.buf)
	l.buf = nil
	return err
}

// sync makes sure what was logged so far is in the file, for a reader.
func (l *runLog) sync() error {
	if l == nil {
		return nil
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return nil
	}
	return l.spill()
}

// printf writes one line prefixed with the time.
func (l *runLog) printf(format string, args ...any) {
	if l == nil {
		return
	}
	_, _ = l.Write([]byte(logLine(l.now(), format, args...)))
}

// logLine formats one log line: the time, the message, a newline.
func logLine(now time.Time, format string, args ...any) string {
	var b strings.Builder
	b.WriteString(now.Format(logTimeLayout))
	b.WriteByte(' ')
	fmt.Fprintf(&b, format, args...)
	if !strings.HasSuffix(b.String(), "\n") {
		b.WriteByte('\n')
	}
	return b.String()
}

// file returns the log's file, creating it, for a subprocess to write to
// directly; nil if the log is closed or cannot be created.
func (l *runLog) file() *os.File {
	if l == nil {
		return nil
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed || l.spill() != nil {
		return nil
	}
	return l.f
}

// slogger returns a logger whose records are lines of the log, prefixed
// with the time like printf's.
func (l *runLog) slogger() *slog.Logger {
	return slog.New(slog.NewTextHandler(stampWriter{l}, &slog.HandlerOptions{
		Level: slog.LevelDebug - 4,
		ReplaceAttr: func(groups []string, a slog.Attr) slog.Attr {
			if len(groups) == 0 && a.Key == slog.TimeKey {
				return slog.Attr{}
			}
			return a
		},
	}))
}

// stampWriter prefixes each write, a whole slog record, with the time.
type stampWriter struct{ l *runLog }

func (w stampWriter) Write(p []byte) (int, error) {
	b := make([]byte, 0, len(logTimeLayout)+1+len(p))
	b = w.l.now().AppendFormat(b, logTimeLayout)
	b = append(b, ' ')
	b = append(b, p...)
	if _, err := w.l.Write(b); err != nil {
		return 0, err
	}
	return len(p), nil
}

// Close writes what is buffered to the file and closes it; later writes
// are dropped.
func (l *runLog) Close() error {
	if l == nil {
		return nil
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return nil
	}
	l.closed = true
	err := l.spill()
	if l.f != nil {
		err = errors.Join(err, l.f.Close())
		l.f = nil
	}
	return err
}

// logStore lays out run logs on disk:
//
//	<dir>/<YYYY-MM-DD>/<run id / 1000>/<run id>.log
//
// The day (UTC) is when the executor accepted the run, so retention removes
// whole days; the middle level keeps at most 1000 files per directory even
// when jobs fire every second.
type logStore struct {
	dir  string
	now  func() time.Time
	dirs sync.Map // directories known to exist
}

func (s *logStore) path(day string, runID int64) string {
	return filepath.Join(s.dir, day, strconv.FormatInt(runID/1000, 10), strconv.FormatInt(runID, 10)+".log")
}

// days lists the day directories, newest first.
func (s *logStore) days() ([]string, error) {
	entries, err := os.ReadDir(s.dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var days []string
	for _, e := range entries {
		if _, err := time.Parse(dayLayout, e.Name()); err == nil && e.IsDir() {
			days = append(days, e.Name())
		}
	}
	slices.Reverse(days)
	return days, nil
}

// find returns the path of runID's log, or an error wrapping
// [fs.ErrNotExist].
func (s *logStore) find(runID int64) (string, error) {
	days, err := s.days()
	if err != nil {
		return "", err
	}
	for _, day := range days {
		p := s.path(day, runID)
		if _, err := os.Stat(p); err == nil {
			return p, nil
		}
	}
	return "", fmt.Errorf("log of run %d: %w", runID, fs.ErrNotExist)
}

// reserve returns the path of runID's log in today's directory, where the
// run's log will be written. It fails with [fs.ErrExist] when the run
// already has a log from today or yesterday: it was accepted before. (The
// admin sends each run once; this guards against a replayed request, also
// across an executor restart, without searching every day of the
// retention.)
func (s *logStore) reserve(runID int64) (string, error) {
	now := s.now().UTC()
	p := s.path(now.Format(dayLayout), runID)
	for _, q := range []string{p, s.path(now.AddDate(0, 0, -1).Format(dayLayout), runID)} {
		if _, err := os.Stat(q); err == nil {
			return p, fmt.Errorf("log of run %d: %w", runID, fs.ErrExist)
		}
	}
	return p, nil
}

// open creates (or opens, to append) the log file at p, and its directory
// if needed. Directories made before are remembered, so the usual case is
// one call.
func (s *logStore) open(p string) (*os.File, error) {
	dir := filepath.Dir(p)
	if _, ok := s.dirs.Load(dir); !ok {
		if err := os.MkdirAll(dir, 0o750); err != nil {
			return nil, err
		}
		s.dirs.Store(dir, true)
	}
	f, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o640)
	if errors.Is(err, fs.ErrNotExist) { // the cleaner removed the directory since
		s.dirs.Delete(dir)
		if err := os.MkdirAll(dir, 0o750); err != nil {
			return nil, err
		}
		f, err = os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o640)
	}
	return f, err
}

// clean removes the days whose every log is older than retention. A
// negative retention keeps everything.
func (s *logStore) clean(retention time.Duration) (removed []string, err error) {
	if retention < 0 {
		return nil, nil
	}
	days, err := s.days()
	if err != nil {
		return nil, err
	}
	now := s.now()
	var errs []error
	for _, day := range days {
		t, _ := time.Parse(dayLayout, day)
		if now.Before(t.Add(24*time.Hour + retention)) {
			continue
		}
		if err := os.RemoveAll(filepath.Join(s.dir, day)); err != nil {
			errs = append(errs, err)
			continue
		}
		removed = append(removed, day)
	}
	return removed, errors.Join(errs...)
}

// logPage is one page of a run log.
type logPage struct {
	fromLine, toLine int
	content          string
	end              bool
}

// truncatedMark ends a line cut to fit a page.
const truncatedMark = " …[line cut]"

// readLogPage reads lines [from, from+maxLines) of the log at path, at most
// about maxBytes of them, holding no more than one page in memory whatever
// the size of the file or of its lines. ended says the run has finished
// writing the log: then the last line may lack its newline, and a page
// reaching the end of the file ends the log.
func readLogPage(path string, from, maxLines, maxBytes int, ended bool) (logPage, error) {
	from = max(from, 1)
	page := logPage{fromLine: from, toLine: from - 1}
	f, err := os.Open(path)
	if err != nil {
		return page, err
	}
	defer f.Close()
	r := bufio.NewReaderSize(f, 32<<10)

	for line := 1; line < from; line++ {
		_, _, nl, err := appendLine(r, nil, 0)
		if err != nil && !errors.Is(err, io.EOF) {
			return page, err
		}
		if !nl {
			// The log has fewer lines than from-1, or its last line is
			// incomplete: nothing to return yet.
			page.end = ended
			return page, nil
		}
	}

	buf := make([]byte, 0, min(maxBytes, 64<<10))
	eof := false
	for n := 0; n < maxLines; n++ {
		start := len(buf)
		room := maxBytes - start - 1
		var total int
		var nl bool
		buf, total, nl, err = appendLine(r, buf, max(room, 0))
		if err != nil && !errors.Is(err, io.EOF) {
			return page, err
		}
		if total == 0 && !nl {
			eof = true
			break
		}
		if !nl && !ended {
			// The run is still writing this line: leave it for the next page.
			buf = buf[:start]
			break
		}
		if total > room {
			if start > 0 {
				buf = buf[:start] // does not fit: first line of the next page
				break
			}
			cut := max(room-len(truncatedMark), 0)
			for cut > 0 && !utf8.RuneStart(buf[cut]) {
				cut--
			}
			buf = append(buf[:cut], truncatedMark...)
		}
		if nl {
			buf = append(buf, '\n')
		} else {
			eof = true
		}
		page.toLine++
		if eof {
			break
		}
	}
	if !eof {
		if _, err := r.Peek(1); errors.Is(err, io.EOF) {
			eof = true
		}
	}
	page.content = strings.ToValidUTF8(string(buf), "\uFFFD")
	page.end = ended && eof
	return page, nil
}

// appendLine reads one line from r and appends at most keep bytes of it,
// without the newline, to dst. total is the line's full length without the
// newline; nl says whether it ended with one (false at the end of the file).
func appendLine(r *bufio.Reader, dst []byte, keep int) (out []byte, total int, nl bool, err error) {
	out = dst
	for {
		b, err := r.ReadSlice('\n')
		if err == nil {
			b = b[:len(b)-1]
			nl = true
		}
		if room := keep - (len(out) - len(dst)); room > 0 {
			out = append(out, b[:min(room, len(b))]...)
		}
		total += len(b)
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		return out, total, nl, err
	}
}
