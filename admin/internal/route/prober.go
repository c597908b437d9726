package route

import "context"

// Prober asks executors about themselves; the admin implements it with its executor RPCs
// (ExecutorService.Beat and IdleBeat). [Failover] and [Busyover] use it.
//
// A Prober must be safe for concurrent use and should bound every call with its own timeout:
// the strategies probe one executor after another under the fire's context, so an executor
// that drops packets would otherwise use up the whole deadline of the fire.
type Prober interface {
	// Beat returns nil if the executor at address is alive and answering.
	Beat(ctx context.Context, address string) error
	// IdleBeat reports whether the executor at address is idle for jobID: not running it and
	// with no run of it queued. When it is busy, reason says why, for people. A non-nil err
	// means the executor could not be asked.
	IdleBeat(ctx context.Context, address string, jobID int64) (idle bool, reason string, err error)
}
