package main

import (
	"errors"
	"fmt"
	"io"

	"connectrpc.com/connect"
)

// Exit codes of client commands, for scripts.
const (
	exitOK           = 0
	exitFailure      = 1 // anything not below: internal error, canceled, ...
	exitUsage        = 2 // unknown command, bad flag or argument
	exitUnauthorized = 3 // unauthenticated: no credential, or a wrong or expired one
	exitDenied       = 4 // permission_denied
	exitNotFound     = 5 // not_found
	exitRefused      = 6 // invalid_argument, already_exists, failed_precondition, out_of_range, resource_exhausted
	exitUnavailable  = 7 // unavailable: the admin (or an executor behind it) cannot be reached
)

// usageError is a mistake in the command line (exit code 2).
type usageError struct{ error }

func (e usageError) Unwrap() error { return e.error }

func usagef(format string, args ...any) error { return usageError{fmt.Errorf(format, args...)} }

// loggedError is an error already written to the log (as a JSON record,
// with serve --log-format json), to exit with code without printing it
// again as a line that is no JSON.
type loggedError struct {
	error
	code int
}

func (e loggedError) Unwrap() error { return e.error }

// exitCode prints err (if any) to w and returns the exit code for it.
func exitCode(w io.Writer, err error) int {
	if err == nil {
		return exitOK
	}
	var le loggedError
	if errors.As(err, &le) {
		return le.code
	}
	var ue usageError
	if errors.As(err, &ue) {
		fmt.Fprintln(w, "carillon:", err)
		return exitUsage
	}
	var ce *connect.Error
	if !errors.As(err, &ce) {
		fmt.Fprintln(w, "carillon:", err)
		return exitFailure
	}
	fmt.Fprintf(w, "carillon: %s: %s\n", ce.Code(), ce.Message())
	switch ce.Code() {
	case connect.CodeUnauthenticated:
		return exitUnauthorized
	case connect.CodePermissionDenied:
		return exitDenied
	case connect.CodeNotFound:
		return exitNotFound
	case connect.CodeInvalidArgument, connect.CodeAlreadyExists, connect.CodeFailedPrecondition,
		connect.CodeOutOfRange, connect.CodeResourceExhausted:
		return exitRefused
	case connect.CodeUnavailable:
		return exitUnavailable
	}
	return exitFailure
}

// notFound is a not_found error found by the client itself (exit code 5).
func notFound(msg string) error { return connect.NewError(connect.CodeNotFound, errors.New(msg)) }
