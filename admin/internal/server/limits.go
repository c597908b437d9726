package server

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"time"

	"connectrpc.com/connect"

	"github.com/carillonhq/carillon/admin/internal/store"
)

const (
	// ReadTimeoutDefault is the default Config.ReadTimeout.
	ReadTimeoutDefault = 10 * time.Second
	// MaxQueuedReadsDefault is the default Config.MaxQueuedReads.
	MaxQueuedReadsDefault = 64
)

// MaxReadsDefault is the default Config.MaxReads: half the processors, at
// least one. API reads then leave the other half to the scheduler and the
// dispatcher (BENCHMARKS.md, issue 13, measures fire lateness next to
// reading clients).
var MaxReadsDefault = max(1, runtime.NumCPU()/2)

// readLimiter bounds the management API's reads (its Get and List calls):
// each has a deadline of Config.ReadTimeout, at most Config.MaxReads run at
// once, and at most Config.MaxQueuedReads wait for their turn; a read
// beyond those is refused at once with resource_exhausted. Every call of
// the management API reads through the store's API connections
// (store.WithAPIReads), never the scheduler's.
type readLimiter struct {
	timeout time.Duration
	running chan struct{} // a token per read running
	queued  chan struct{} // a token per read running or waiting
}

func newReadLimiter(timeout time.Duration, running, queued int) *readLimiter {
	return &readLimiter{timeout: timeout, running: make(chan struct{}, running), queued: make(chan struct{}, running+queued)}
}

// isRead says whether procedure (/service/Method) only reads.
func isRead(procedure string) bool {
	method := procedure[strings.LastIndex(procedure, "/")+1:]
	return strings.HasPrefix(method, "Get") || strings.HasPrefix(method, "List")
}

func (l *readLimiter) WrapUnary(next connect.UnaryFunc) connect.UnaryFunc {
	return func(ctx context.Context, req connect.AnyRequest) (connect.AnyResponse, error) {
		ctx = store.WithAPIReads(ctx)
		if !isRead(req.Spec().Procedure) {
			return next(ctx, req)
		}
		select {
		case l.queued <- struct{}{}:
			defer func() { <-l.queued }()
		default:
			return nil, connect.NewError(connect.CodeResourceExhausted, fmt.Errorf(
				"the admin is busy: %d API reads are running or waiting, its limit; retry later with backoff", cap(l.queued)))
		}
		ctx, cancel := context.WithTimeout(ctx, l.timeout)
		defer cancel()
		select {
		case l.running <- struct{}{}:
			defer func() { <-l.running }()
		case <-ctx.Done():
			return nil, l.deadline(ctx, "waiting for its turn behind other API reads")
		}
		res, err := next(ctx, req)
		if err != nil && ctx.Err() != nil {
			return nil, l.deadline(ctx, "reading")
		}
		return res, err
	}
}

// deadline explains a read cut short by ctx.
func (l *readLimiter) deadline(ctx context.Context, what string) error {
	if errors.Is(ctx.Err(), context.Canceled) {
		return connect.NewError(connect.CodeCanceled, ctx.Err())
	}
	return connect.NewError(connect.CodeDeadlineExceeded, fmt.Errorf(
		"the read ran out of time %s (the admin allows %s per API read, less if the client set a shorter deadline): "+
			"narrow it (a job, a status, a smaller page or range) or retry later", what, l.timeout))
}

func (l *readLimiter) WrapStreamingClient(next connect.StreamingClientFunc) connect.StreamingClientFunc {
	return next
}

func (l *readLimiter) WrapStreamingHandler(next connect.StreamingHandlerFunc) connect.StreamingHandlerFunc {
	return func(ctx context.Context, conn connect.StreamingHandlerConn) error {
		return next(store.WithAPIReads(ctx), conn)
	}
}
