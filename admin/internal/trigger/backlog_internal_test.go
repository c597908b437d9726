package trigger

import (
	"strings"
	"testing"
	"time"

	"github.com/carillonhq/carillon/internal/clock"
	carillonv1 "github.com/carillonhq/carillon/proto/carillon/v1"
)

// TestBacklog: the backlog counts the scheduled fires handed over, by
// their instant to a tenth of a second, and each once, until reached;
// manual fires and retries are not counted.
func TestBacklog(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2026, 11, 29, 8, 0, 0, 0, time.UTC)
	scheduled := carillonv1.TriggerType_TRIGGER_TYPE_SCHEDULE
	fs := []fire{
		{id: 1, triggerType: scheduled, at: t0.Add(2*time.Second + 50*time.Millisecond)},
		{id: 2, triggerType: scheduled, at: t0.Add(time.Second + 250*time.Millisecond)},
		{id: 3, triggerType: scheduled, at: t0.Add(time.Second + 260*time.Millisecond)},
		{id: 4, triggerType: carillonv1.TriggerType_TRIGGER_TYPE_MANUAL},
		{id: 5, triggerType: carillonv1.TriggerType_TRIGGER_TYPE_RETRY, at: t0},
	}
	var b backlog
	if _, ok := b.oldest(); ok || b.len() != 0 {
		t.Fatalf("a new backlog: %d fires, oldest found %v; want empty", b.len(), ok)
	}
	b.add(fs)
	if n := b.len(); n != 3 {
		t.Errorf("after 3 scheduled fires, a manual one and a retry: %d fires, want 3", n)
	}
	if at, ok := b.oldest(); !ok || !at.Equal(t0.Add(1200*time.Millisecond)) {
		t.Errorf("oldest = %v, %v; want %v, the earliest instant to a tenth of a second", at, ok, t0.Add(1200*time.Millisecond))
	}
	for _, i := range []int{1, 1, 3, 4} { // twice the same, and two never counted
		b.reached(&fs[i])
	}
	if at, ok := b.oldest(); b.len() != 2 || !ok || !at.Equal(t0.Add(1200*time.Millisecond)) {
		t.Errorf("after one of the two earliest reached (twice): %d fires, oldest %v; want 2, %v", b.len(), at, t0.Add(1200*time.Millisecond))
	}
	b.reached(&fs[2])
	if at, ok := b.oldest(); b.len() != 1 || !ok || !at.Equal(t0.Add(2*time.Second)) {
		t.Errorf("after both earliest reached: %d fires, oldest %v; want 1, %v", b.len(), at, t0.Add(2*time.Second))
	}
	b.reached(&fs[0])
	if _, ok := b.oldest(); ok || b.len() != 0 {
		t.Errorf("every fire reached: %d fires, oldest found %v; want empty", b.len(), ok)
	}
}

// TestOverloadedByBacklog: the dispatcher says it is overloaded while a
// scheduled fire it holds unreached is more than half the misfire
// threshold past its instant, though it sent nothing late (it sent
// nothing at all), and not once that fire is reached.
func TestOverloadedByBacklog(t *testing.T) {
	t.Parallel()
	clk := clock.NewFake(time.Date(2026, 11, 29, 8, 0, 0, 0, time.UTC))
	d := &Dispatcher{cfg: &Config{Clock: clk, MisfireThreshold: 5 * time.Second}}
	half := d.cfg.MisfireThreshold / 2
	scheduled := carillonv1.TriggerType_TRIGGER_TYPE_SCHEDULE
	fs := []fire{
		{id: 1, triggerType: scheduled, at: clk.Now().Add(-half + 300*time.Millisecond)},
		{id: 2, triggerType: scheduled, at: clk.Now().Add(time.Minute)},
	}
	d.backlog.add(fs)
	if why, ok := d.Overloaded(); ok {
		t.Errorf("a fire waiting less than half the threshold after its instant: overloaded, %q; want not", why)
	}
	clk.Add(time.Second)
	why, ok := d.Overloaded()
	if want := "still waiting to be sent 3.2s after its instant"; !ok || !strings.Contains(why, want) {
		t.Errorf("a fire waiting 3.2 s after its instant: overloaded %v, %q; want so, saying %q", ok, why, want)
	}
	d.backlog.reached(&fs[0])
	if why, ok := d.Overloaded(); ok {
		t.Errorf("that fire reached, the other due in a minute: overloaded, %q; want not", why)
	}
}
