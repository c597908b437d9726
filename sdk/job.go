package sdk

import (
	"io"
	"log/slog"
	"time"

	"github.com/carillonhq/carillon/sdk/internal/runlog"
)

// Job is what a [Handler] sees of one execution (a run) of a job: who it is,
// its parameter and shard, and its log.
//
// Everything a handler writes through [Job.Logf], [Job.Logger] and
// [Job.LogWriter] goes to the run's own log, which the admin reads page
// by page (RunService.ReadRunLog) while the run goes on and after it ends.
// Writes after the run ended are dropped. A Job built by hand, as in a unit
// test of a handler, discards its log.
type Job struct {
	// RunID is the admin's id of this execution.
	RunID int64
	// JobID is the id of the job this run belongs to.
	JobID int64
	// Name is the name the handler was registered under with
	// [Executor.Handle]; for a script run, it is whatever the admin sent
	// (often empty).
	Name string
	// Param is the job's parameter for this run, as people typed it in the
	// admin; it may be empty.
	Param string
	// ShardIndex is this run's 0-based shard when the admin broadcasts a
	// run to every executor of the group; 0 otherwise.
	ShardIndex int
	// ShardTotal is the number of shards, at least 1.
	ShardTotal int
	// ScheduledAt is the fire time this run belongs to (for a manual
	// trigger, when it was triggered): its logical time, the same for
	// every retry of the run. It may be the zero Time.
	ScheduledAt time.Time
	// Attempt is 0 for the run's first attempt, n for its n-th retry (0
	// from admins that predate it).
	Attempt int
	// Inputs are, for a run of a workflow node, the outputs its
	// dependencies published ([Job.SetOutput]), merged in the order of the
	// node's dependencies: a key of a later dependency replaces an earlier
	// one's. Nil outside workflows and when they published nothing. The
	// handler may read it, not change it.
	Inputs map[string]string

	log     *runlog.Log
	logger  *slog.Logger
	outputs *outputs
}

// Logf formats like [fmt.Printf] and writes one line to the run's log,
// prefixed with the time. It is safe for concurrent use.
func (j *Job) Logf(format string, args ...any) {
	j.log.Printf(format, args...)
}

// Logger returns a [*slog.Logger] that writes to the run's log, one line per
// record in [slog.TextHandler]'s format, at every level. It is safe for
// concurrent use.
func (j *Job) Logger() *slog.Logger {
	if j.logger == nil {
		if j.log == nil {
			return slog.New(slog.DiscardHandler)
		}
		j.logger = j.log.Slogger()
	}
	return j.logger
}

// LogWriter returns an [io.Writer] that appends raw bytes to the run's log,
// for example to send a subprocess's output there:
//
//	cmd.Stdout = job.LogWriter()
//	cmd.Stderr = job.LogWriter()
//
// It is safe for concurrent use, but concurrent writers should write whole
// lines.
func (j *Job) LogWriter() io.Writer {
	if j.log == nil {
		return io.Discard
	}
	return j.log
}

// Bounds of one page of a run log returned by ReadLog, so that reading the
// log of a run that printed gigabytes costs the executor, the admin and the
// browser no more than one page at a time.
const (
	// LogPageMaxLines is the most lines one page of a run log holds.
	LogPageMaxLines = runlog.PageMaxLines
	// LogPageMaxBytes is about the most bytes one page of a run log holds. A
	// single line longer than that is cut, and marked as cut.
	LogPageMaxBytes = runlog.PageMaxBytes
)
