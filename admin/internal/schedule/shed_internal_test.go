package schedule

import (
	"testing"
	"time"

	"github.com/carillonhq/carillon/admin/internal/store"
	carillonv1 "github.com/carillonhq/carillon/proto/carillon/v1"
)

// TestShedsWithinLookahead: an overloaded scan sheds the fires due
// within its look-ahead, not those of a burst it claims long before
// their instant, nor a FIRE_ONCE_NOW job's, nor any while the dispatcher
// keeps up.
func TestShedsWithinLookahead(t *testing.T) {
	s := New(Config{})
	now := time.Date(2026, 11, 29, 8, 0, 0, 0, time.UTC)
	plain := store.Job{MisfireStrategy: carillonv1.MisfireStrategy_MISFIRE_STRATEGY_DO_NOTHING}
	once := store.Job{MisfireStrategy: carillonv1.MisfireStrategy_MISFIRE_STRATEGY_FIRE_ONCE_NOW}
	for _, c := range []struct {
		name     string
		shedding string
		job      store.Job
		due      time.Time
		want     bool
	}{
		{"late", "overloaded", plain, now.Add(-time.Second), true},
		{"a look-ahead off", "overloaded", plain, now.Add(LookaheadDefault), true},
		{"a burst claimed early", "overloaded", plain, now.Add(LookaheadDefault + time.Millisecond), false},
		{"FIRE_ONCE_NOW", "overloaded", once, now, false},
		{"keeping up", "", plain, now, false},
	} {
		s.shedding = c.shedding
		if got := s.sheds(c.job, c.due, now); got != c.want {
			t.Errorf("%s: sheds %v, want %v", c.name, got, c.want)
		}
	}
}
