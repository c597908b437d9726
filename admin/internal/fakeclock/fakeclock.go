// Package fakeclock is the old name of clock.Fake (internal/clock), kept
// only until the test files of admin/internal/trigger and
// admin/internal/server that import it move to internal/clock; new code
// uses internal/clock.
package fakeclock

import (
	"time"

	"github.com/carillonhq/carillon/internal/clock"
)

// Clock is clock.Fake.
type Clock = clock.Fake

// New returns a clock.Fake at t.
func New(t time.Time) *Clock { return clock.NewFake(t) }
