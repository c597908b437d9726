package server

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

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
		return connect.NewError(connect.CodeNotFound, err)
	case errors.Is(err, store.ErrAlreadyExists):
		return connect.NewError(connect.CodeAlreadyExists, err)
	case errors.Is(err, store.ErrInUse):
		return connect.NewError(connect.CodeFailedPrecondition, err)
	case errors.Is(err, store.ErrGroupNotFound):
		return invalid("job.group_id", "%v", err)
	case errors.Is(err, store.ErrFull):
		return connect.NewError(connect.CodeResourceExhausted, fmt.Errorf(
			"the admin's database disk is full, nothing was written: free space on the admin's disk and retry (%w)", err))
	case errors.Is(err, store.ErrReadOnly):
		return connect.NewError(connect.CodeUnavailable, fmt.Errorf(
			"the admin's database is read-only, nothing was written: make its file, directory and file system writable (%w)", err))
	case errors.Is(err, context.Canceled):
		return connect.NewError(connect.CodeCanceled, err)
	case errors.Is(err, context.DeadlineExceeded):
		return connect.NewError(connect.CodeDeadlineExceeded, err)
	}
	s.cfg.Logger.Error("server: internal error", slog.Any("err", err))
	return connect.NewError(connect.CodeInternal, err)
}
