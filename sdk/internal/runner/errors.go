package runner

import "errors"

// The errors of runs, which package sdk exports under the same names (see
// its documentation of each): a handler's context ends with ErrKilled,
// ErrTimedOut or ErrShuttingDown as its cause; Accept refuses a run with
// ErrShuttingDown, ErrDiscarded or ErrDuplicateRun; a script run fails
// with ErrScriptsDisabled where scripts are disabled.
var (
	ErrDiscarded       = errors.New("sdk: run discarded")
	ErrDuplicateRun    = errors.New("sdk: duplicate run")
	ErrScriptsDisabled = errors.New("sdk: scripts are disabled on this executor")
	ErrKilled          = errors.New("sdk: run killed")
	ErrTimedOut        = errors.New("sdk: run timed out")
	ErrShuttingDown    = errors.New("sdk: executor shutting down")
)
