package route

import "time"

// IdleTimeoutDefault is how long the stateful strategies remember a job that is not routed.
// It matches the day after which xxl-job clears its routers' state, but only jobs idle that
// long are forgotten.
const IdleTimeoutDefault = 24 * time.Hour

// An Option configures the per-job memory of the stateful strategies: [RoundRobin],
// [LeastFrequentlyUsed] and [LeastRecentlyUsed].
type Option func(*options)

type options struct {
	idle time.Duration
	now  func() time.Time
}

func newOptions(opts []Option) options {
	o := options{idle: IdleTimeoutDefault, now: time.Now}
	for _, opt := range opts {
		opt(&o)
	}
	return o
}

// WithIdleTimeout sets how long a strategy remembers a job it has not routed. A job routed at
// least once every d is never forgotten. One that goes unrouted for d (a deleted or stopped
// job) is forgotten after between d and 2×d, as other jobs are routed; that is what bounds
// the strategy's memory. A forgotten job starts over like a new one, at the place the
// strategy gives the next new job, so a job that fires less often than d still moves around
// the group, but not in strict turn. Defaults to [IdleTimeoutDefault]; d <= 0 keeps the
// default.
func WithIdleTimeout(d time.Duration) Option {
	return func(o *options) {
		if d > 0 {
			o.idle = d
		}
	}
}

// WithNowFunc sets the clock the idle timeout is measured with: a clock.Clock's Now, for a
// test that sets the clock back (a synctest bubble serves the others). Defaults to time.Now;
// nil keeps the default.
func WithNowFunc(now func() time.Time) Option {
	return func(o *options) {
		if now != nil {
			o.now = now
		}
	}
}
