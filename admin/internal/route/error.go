package route

import (
	"errors"
	"fmt"
)

// ErrNoExecutor is wrapped by the error of [Strategy.Pick] when no executor can be chosen:
// the group has no live executor, or every one failed its probe. The wrapping error's message
// says which, so it can be shown as is; test for the condition with errors.Is.
var ErrNoExecutor = errors.New("route: no executor available")

// noExecutorError is an error that reads as its own message and wraps [ErrNoExecutor].
type noExecutorError struct{ msg string }

func (e *noExecutorError) Error() string { return e.msg }
func (e *noExecutorError) Unwrap() error { return ErrNoExecutor }

// noExecutor returns an error wrapping [ErrNoExecutor] with the message "<strategy> routing: <why>":
// a run's message shows it as is, so it names no Go package.
func noExecutor(strategy, format string, args ...any) error {
	return &noExecutorError{msg: strategy + " routing: " + fmt.Sprintf(format, args...)}
}

// noAddresses is the error every strategy returns when it is given no address.
func noAddresses(strategy string) error {
	return noExecutor(strategy, "no live executor among 0 addresses")
}
