package testsignal_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/carillonhq/carillon/internal/testsignal"
)

// TestAwait: Await returns once an emission follows the change it waits
// for, and not while nothing is emitted.
func TestAwait(t *testing.T) {
	t.Parallel()
	var s testsignal.Signal
	s.Emit() // off: nobody waits, nothing happens
	var n atomic.Int64
	go func() {
		for range 3 {
			n.Add(1)
			s.Emit()
		}
	}()
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	if !s.Await(ctx, func() bool { return n.Load() == 3 }) {
		t.Fatal("Await: the third emission never came")
	}
	short, cancel := context.WithTimeout(t.Context(), 10*time.Millisecond)
	defer cancel()
	if s.Await(short, func() bool { return n.Load() == 4 }) {
		t.Error("Await returned true with nothing emitted")
	}
}
