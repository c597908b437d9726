package trigger

import (
	"testing"
	"testing/synctest"
)

// TestInflightAddWhileWaiting: work added while Wait waits is waited for
// too, and adding after a Wait returned is allowed (a sync.WaitGroup may
// panic on both). In a synctest bubble, synctest.Wait says when every
// goroutine is blocked, so "Wait has not returned" is a fact, not a guess.
func TestInflightAddWhileWaiting(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		var f inflight
		f.Add(1)
		done := make(chan struct{})
		go func() { f.Wait(); close(done) }()
		release := make(chan struct{})
		f.Go(func() { <-release }) // added while Wait may be waiting
		f.Done()
		synctest.Wait()
		select {
		case <-done:
			t.Fatal("Wait returned while work added during it was running")
		default:
		}
		close(release)
		synctest.Wait()
		select {
		case <-done:
		default:
			t.Fatal("Wait did not return after all work ended")
		}
		f.Go(func() {}) // reuse after Wait returned
		f.Wait()
	})
}
