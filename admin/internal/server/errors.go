package server

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"

	"connectrpc.com/connect"

	"github.com/carillonhq/carillon/admin/internal/store"
)

// invalid returns an invalid_argument error naming the field and the rule.
func invalid(field, format string, args ...any) error {
	return connect.NewError(connect.CodeInvalidArgument, fmt.Errorf("%s: %s", field, fmt.Sprintf(format, args...)))
}

// toConnect maps a store error to its Connect code. It is the one place
// that does: handlers return whatever the store said through it.
func (s *Server) toConnect(err error) error {
	if err == nil {
		return nil
	}
	var ce *connect.Error
	switch {
	case errors.As(err, &ce):
		return err
	case errors.Is(err, store.ErrNotFound):
		return connect.NewError(connect.CodeNotFound, reword(err, store.ErrNotFound, "%s not found"))
	case errors.Is(err, store.ErrAlreadyExists):
		return connect.NewError(connect.CodeAlreadyExists, reword(err, store.ErrAlreadyExists, "%s already exists"))
	case errors.Is(err, store.ErrInUse):
		return connect.NewError(connect.CodeFailedPrecondition, reword(err, store.ErrInUse, "%s"))
	case errors.Is(err, store.ErrWorkflowRunState):
		return connect.NewError(connect.CodeFailedPrecondition, reword(err, store.ErrWorkflowRunState, "%s"))
	case errors.Is(err, store.ErrGroupNotFound):
		return invalid("job.group_id", "%v", reword(err, store.ErrGroupNotFound, "%s not found"))
	case errors.Is(err, store.ErrCalendarNotFound): // deleted since the handler checked
		return invalid("job.calendar_ids", "%v", reword(err, store.ErrCalendarNotFound, "%s not found"))
	case errors.Is(err, store.ErrFull):
		return connect.NewError(connect.CodeResourceExhausted, fmt.Errorf(
			"the admin's database disk is full, nothing was written: free space on the admin's disk and retry (%w)", err))
	case errors.Is(err, store.ErrReadOnly):
		return connect.NewError(connect.CodeUnavailable, fmt.Errorf(
			"the admin's database is read-only, nothing was written: make its file, directory and file system writable (%w)", err))
	case errors.Is(err, store.ErrLeaseLost):
		return connect.NewError(connect.CodeUnavailable, fmt.Errorf(
			"this admin lost its lease on the shared database and is stopping, nothing was written: call another admin (%w)", err))
	case errors.Is(err, context.Canceled):
		return connect.NewError(connect.CodeCanceled, err)
	case errors.Is(err, context.DeadlineExceeded):
		return connect.NewError(connect.CodeDeadlineExceeded, err)
	}
	s.cfg.Logger.Error("server: internal error", slog.Any("err", err))
	return connect.NewError(connect.CodeInternal, err)
}

// reworded is an error with a message for the person who made the call,
// wrapping the store's error.
type reworded struct {
	msg string
	err error
}

func (r reworded) Error() string { return r.msg }
func (r reworded) Unwrap() error { return r.err }

// reword says err, which wraps the store's sentinel as "<sentinel>:
// <what>", as the person knows the thing: format with what ("%s not
// found": "job 99 not found", not "store: not found: job 99").
func reword(err, sentinel error, format string) error {
	msg := err.Error()
	i := strings.Index(msg, sentinel.Error()+": ")
	if i < 0 {
		return err
	}
	return reworded{msg: fmt.Sprintf(format, msg[i+len(sentinel.Error())+2:]), err: err}
}
