package runlog

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strconv"
	"sync"
	"time"
)

// logTimeLayout prefixes every line written by Logf and the executor.
const logTimeLayout = "2006-01-02 15:04:05.000"

// Log is one run's log. Lines are kept in memory and, when the run
// ends, appended as one record to the segment file its run shares with up to
// 999 others (see [logStore.appendRecord]), so a short run costs one write to
// a file that is already open, and accepting a run touches no file at all.
// A log that must be on disk before the run ends (it passes SpillBytes,
// someone reads it while the run runs, a script's subprocess writes to it)
// gets a file of its own instead; when the run ends, that file is closed
// and its end mark, an empty record of the run, appended to the segment:
// a file without it is the log of a run cut short by a crash (see
// [logStore.logStates]). A nil or closed Log discards writes.
type Log struct {
	mu     sync.Mutex
	store  *Store
	dir    string // the run's directory in store (see [logStore.runDir])
	runID  int64
	buf    []byte
	f      *os.File // the log's own file; nil while the log is in memory
	closed bool
	now    func() time.Time
	// startAt is when the run started, for its start line, written before
	// the next line or when the log is put away (started): not on the
	// start of a burst's handlers, which wait for it.
	startAt time.Time
}

// logLinesReserve is the room a run's log keeps after its first line,
// for the executor's lines of the run's start and end: a burst of runs
// started on one instant appends its start lines without growing them.
const logLinesReserve = 160

// SpillBytes is how much of a run's log is kept in memory before it is
// written to a file of its own.
const SpillBytes = 64 << 10

// NewLog returns the log of runID, which will be kept in store in dir,
// from [logStore.runDir].
func NewLog(store *Store, dir string, runID int64, now func() time.Time) *Log {
	return &Log{store: store, dir: dir, runID: runID, now: now}
}

// Write appends p to the log.
func (l *Log) Write(p []byte) (int, error) {
	if l == nil {
		return len(p), nil
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return len(p), nil
	}
	if err := l.writeStart(); err != nil {
		return 0, err
	}
	return l.write(p)
}

// write is Write with l.mu held, l open.
func (l *Log) write(p []byte) (int, error) {
	if l.f == nil && len(l.buf)+len(p) <= SpillBytes {
		if l.buf == nil { // the first line, "accepted": room for the start and end lines too
			l.buf = make([]byte, 0, len(p)+logLinesReserve)
		}
		l.buf = append(l.buf, p...)
		return len(p), nil
	}
	if err := l.spill(); err != nil {
		return 0, err
	}
	return l.f.Write(p)
}

// Started notes that the run Started at at: its start line, "----- run
// N Started", is written with the next line, or when the log is put away.
func (l *Log) Started(at time.Time) {
	if l == nil {
		return
	}
	l.mu.Lock()
	l.startAt = at
	l.mu.Unlock()
}

// writeStart writes the start line noted by started, if any; l.mu is
// held, l open.
func (l *Log) writeStart() error {
	if l.startAt.IsZero() {
		return nil
	}
	at := l.startAt
	l.startAt = time.Time{}
	b := make([]byte, 0, len(logTimeLayout)+32)
	b = append(appendLogTime(b, at), " ----- run "...)
	b = append(strconv.AppendInt(b, l.runID, 10), " started\n"...)
	_, err := l.write(b)
	return err
}

// spill writes the buffered lines to the log's own file, creating it; l.mu
// is held.
func (l *Log) spill() error {
	if err := l.writeStart(); err != nil {
		return err
	}
	if l.f != nil {
		return nil
	}
	f, err := l.store.create(l.store.path(l.dir, l.runID), os.O_WRONLY)
	if err != nil {
		return err
	}
	l.f = f
	_, err = f.Write(l.buf)
	l.buf = nil
	return err
}

// Sync makes sure what was logged so far is in the log's own file, for a
// reader, and returns the file's path; "" when the log is closed: then
// Close has put it where [logStore.find] finds it.
func (l *Log) Sync() (path string, err error) {
	if l == nil {
		return "", nil
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return "", nil
	}
	if err := l.spill(); err != nil {
		return "", err
	}
	return l.f.Name(), nil
}

// Printf writes one line prefixed with the time.
func (l *Log) Printf(format string, args ...any) {
	if l == nil {
		return
	}
	_, _ = l.Write(logLine(l.now(), format, args...))
}

// PrintfAt writes one line prefixed with at.
func (l *Log) PrintfAt(at time.Time, format string, args ...any) {
	if l == nil {
		return
	}
	_, _ = l.Write(logLine(at, format, args...))
}

// logLine formats one log line: the time, the message, a newline.
func logLine(now time.Time, format string, args ...any) []byte {
	b := make([]byte, 0, 64+len(format))
	b = append(appendLogTime(b, now), ' ')
	b = fmt.Appendf(b, format, args...)
	if b[len(b)-1] != '\n' {
		b = append(b, '\n')
	}
	return b
}

// File returns the log's own File, creating it, for a subprocess to write
// to directly; nil if the log is closed or the File cannot be created.
func (l *Log) File() *os.File {
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

// Slogger returns a logger whose records are lines of the log, prefixed
// with the time like printf's.
func (l *Log) Slogger() *slog.Logger {
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
type stampWriter struct{ l *Log }

// Write writes p to the log as one line, after the time.
func (w stampWriter) Write(p []byte) (int, error) {
	b := make([]byte, 0, len(logTimeLayout)+1+len(p))
	b = appendLogTime(b, w.l.now())
	b = append(b, ' ')
	b = append(b, p...)
	if _, err := w.l.Write(b); err != nil {
		return 0, err
	}
	return len(p), nil
}

// Close puts the log on disk for good: a log still in memory is appended to
// its segment as one record, a log with its own file has that file closed
// and its end mark appended to the segment. Later writes are dropped.
func (l *Log) Close() error {
	if l == nil {
		return nil
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return nil
	}
	werr := l.writeStart()
	l.closed = true
	if l.f == nil {
		err := errors.Join(werr, l.store.appendRecord(l.dir, l.runID, l.buf))
		l.buf = nil
		return err
	}
	err := l.f.Close()
	l.f = nil
	return errors.Join(werr, err, l.store.appendRecord(l.dir, l.runID, nil))
}

// Discard closes the log without keeping it: its lines are dropped, and
// its own file, if it has one, removed. A run dropped to be sent again
// (KillRequest.replace) leaves no log, so that the executor does not say
// it held the run (HeldRuns) until it is sent again, and the run sent
// again starts a log of its own.
func (l *Log) Discard() error {
	if l == nil {
		return nil
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return nil
	}
	l.closed = true
	l.buf = nil
	if l.f == nil {
		return nil
	}
	name := l.f.Name()
	err := l.f.Close()
	l.f = nil
	return errors.Join(err, os.Remove(name))
}
