package trigger

import (
	"errors"
	"slices"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestCoalescer: a group added while a call runs waits for it and then goes
// in one call with the others that queued meanwhile, up to max items,
// without splitting a group; a failed batch is retried group by group, so
// only the bad group sees the error.
func TestCoalescer(t *testing.T) {
	var wg sync.WaitGroup
	var mu sync.Mutex
	var calls [][]int
	entered, release := make(chan struct{}), make(chan struct{})
	bad := errors.New("bad item")
	c := &coalescer[int]{max: 4, wg: &wg, fn: func(items []int) error {
		if items[0] == 0 {
			close(entered)
			<-release // hold the first call while others queue
		}
		mu.Lock()
		calls = append(calls, slices.Clone(items))
		mu.Unlock()
		if slices.Contains(items, 13) {
			return bad
		}
		return nil
	}}

	first := c.add([]int{0})
	<-entered
	// The drain is held in the first call: these queue behind it.
	second := c.add([]int{1, 2})
	third := c.add([]int{3})
	fourth := c.add([]int{4, 5}) // would pass max 4 with the two before: next call
	fifth := c.add([]int{13})
	close(release)
	for i, done := range []<-chan error{first, second, third, fourth} {
		if err := <-done; err != nil {
			t.Errorf("group %d: %v, want nil", i+1, err)
		}
	}
	if err := <-fifth; !errors.Is(err, bad) {
		t.Errorf("bad group: %v, want %v", err, bad)
	}
	wg.Wait()

	want := [][]int{
		{0},
		{1, 2, 3},
		{4, 5, 13}, // fails: each group again on its own
		{4, 5},
		{13},
	}
	if diff := cmp.Diff(want, calls); diff != "" {
		t.Errorf("calls (-want +got):\n%s", diff)
	}
}
