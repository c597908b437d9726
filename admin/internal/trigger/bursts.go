package trigger

import (
	"sync"
	"time"
)

// burstTracked is how many fires of one instant a hand-over must carry
// for bursts to count them: below it, a burst's send lead (SendLead) is a
// few milliseconds either way.
const burstTracked = 1000

// burstKept is how long after its instant a burst's count is kept.
const burstKept = 10 * time.Second

// bursts counts the fires handed over for each instant of a large burst,
// so that the parts of a burst handed over apart (the scan's claims of it
// ran past its hand-over, and the fire loop handed each part over as it
// was claimed) are sent with the lead of all of it so far, not of their
// part alone: a late part of a million-fire mark, counted alone, was sent
// seconds after it could have been.
type bursts struct {
	mu sync.Mutex
	n  map[time.Time]int
}

// add adds the fires of one hand-over, counted by instant in counts, to
// those handed over before, and sets each instant's count in counts to
// its total so far. Instants of fewer than burstTracked fires, and not
// counted before, are left as they are and not kept.
func (b *bursts) add(counts map[time.Time]int, now time.Time) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for at := range b.n {
		if at.Before(now.Add(-burstKept)) {
			delete(b.n, at)
		}
	}
	for at, n := range counts {
		prev, ok := b.n[at]
		if !ok && n < burstTracked {
			continue
		}
		if b.n == nil {
			b.n = map[time.Time]int{}
		}
		b.n[at] = prev + n
		counts[at] = prev + n
	}
}
