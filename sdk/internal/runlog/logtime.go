package runlog

import (
	"sync/atomic"
	"time"
)

// logSecond is a second of the log's clock, formatted: every line of the
// runs of one second shares it, so that a line's time costs an append and
// three digits instead of a time.Format.
type logSecond struct {
	unix   int64
	loc    *time.Location
	prefix string // "2006-01-02 15:04:05"
}

var lastLogSecond atomic.Pointer[logSecond]

// appendLogTime appends t as logTimeLayout ("2006-01-02 15:04:05.000").
func appendLogTime(b []byte, t time.Time) []byte {
	sec := lastLogSecond.Load()
	if sec == nil || sec.unix != t.Unix() || sec.loc != t.Location() {
		sec = &logSecond{unix: t.Unix(), loc: t.Location(), prefix: t.Format("2006-01-02 15:04:05")}
		lastLogSecond.Store(sec)
	}
	ms := t.Nanosecond() / int(time.Millisecond)
	return append(append(b, sec.prefix...), '.', byte('0'+ms/100), byte('0'+ms/10%10), byte('0'+ms%10)) //nolint:gosec // bounded: digits, and line numbers of one log
}
