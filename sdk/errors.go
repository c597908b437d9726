package sdk

import (
	"errors"

	"github.com/carillonhq/carillon/sdk/internal/runner"
)

// Errors a handler, its caller or the admin can observe. Compare them with
// [errors.Is]: the executor wraps them with details (which field, which run).
var (
	// ErrInvalidConfig is wrapped by the error [New] returns for a bad
	// [Config]; the message names the field and says why.
	ErrInvalidConfig = errors.New("sdk: invalid config")

	// ErrAlreadyRunning is returned by [Executor.Run] and [Executor.Serve]
	// while another call to either is serving the same Executor.
	ErrAlreadyRunning = errors.New("sdk: executor already running")

	// ErrUnknownHandler refuses a run whose handler name was never
	// registered with [Executor.Handle]. The admin sees it as a not_found
	// Connect error.
	ErrUnknownHandler = errors.New("sdk: unknown handler")

	// ErrDiscarded refuses a run of a job with the DISCARD_LATER block
	// strategy while an earlier run of that job runs or waits on this
	// executor. The admin sees it as a resource_exhausted Connect error.
	ErrDiscarded = runner.ErrDiscarded

	// ErrDuplicateRun refuses a run that this executor has already
	// accepted (the same run id of the same admin database): a run is never
	// run twice. The admin sees it as an already_exists Connect error, which
	// means the first request got through; the executor logs a warning
	// naming the run and the database.
	ErrDuplicateRun = runner.ErrDuplicateRun

	// ErrScriptsDisabled fails a script run on an executor whose
	// [Config].ScriptsEnabled is false.
	ErrScriptsDisabled = runner.ErrScriptsDisabled

	// ErrKilled is the cause of a handler's context when the run is killed:
	// by the admin's Kill, or because a COVER_EARLY run of the same job
	// replaced it. Check it with errors.Is(context.Cause(ctx), ErrKilled).
	// The run is reported KILLED.
	ErrKilled = runner.ErrKilled

	// ErrTimedOut is the cause of a handler's context when the run's
	// timeout elapses. The run is reported TIMED_OUT.
	ErrTimedOut = runner.ErrTimedOut

	// ErrShuttingDown is the cause of a handler's context when the executor
	// stops and its [Config].ShutdownTimeout has elapsed; the admin also
	// receives it (as an unavailable Connect error) for runs it sends while
	// the executor stops. A cancelled run is reported KILLED.
	ErrShuttingDown = runner.ErrShuttingDown
)
