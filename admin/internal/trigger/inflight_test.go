package trigger

import (
	"testing"
	"time"
)

// TestInflightAddWhileWaiting: work added while Wait waits is waited for
// too, and adding after a Wait returned is allowed (a sync.WaitGroup may
// panic on both).
func TestInflightAddWhileWaiting(t *testing.T) {
	t.Parallel()
	var f inflight
	f.Add(1)
	done := make(chan struct{})
	go func() { f.Wait(); close(done) }()
	release := make(chan struct{})
	f.Go(func() { <-release }) // added while Wait may be waiting
	f.Done()
	select {
	case <-done:
		t.Fatal("Wait returned while work added during it was running")
	case <-time.After(50 * time.Millisecond):
	}
	close(release)
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("Wait did not return after all work ended")
	}
	f.Go(func() {}) // reuse after Wait returned
	f.Wait()
}
