package store

import (
	"testing"
	"time"

	carillonv1 "github.com/carillonhq/carillon/proto/carillon/v1"
)

// TestScanners: the fire path's scanners take a driver's int64 (and a
// null, where a column may hold one) as database/sql would convert it,
// and refuse anything else rather than guess.
func TestScanners(t *testing.T) {
	t.Parallel()
	var status carillonv1.RunStatus
	if err := intCol(&status).Scan(int64(carillonv1.RunStatus_RUN_STATUS_FAILED)); err != nil || status != carillonv1.RunStatus_RUN_STATUS_FAILED {
		t.Errorf("an enum: %v, %v; want FAILED", status, err)
	}
	var slot Slot
	if err := intCol(&slot).Scan(int64(SlotHeld)); err != nil || slot != SlotHeld {
		t.Errorf("a Slot: %v, %v; want %v", slot, err, SlotHeld)
	}
	var id int64 = 7
	for _, v := range []any{nil, "12", 1.5, []byte("12")} {
		if err := intCol(&id).Scan(v); err == nil || id != 7 {
			t.Errorf("an integer from %#v: %d, %v; want an error and the value left", v, id, err)
		}
	}
	var capped bool
	if err := (boolInto{&capped}).Scan(int64(1)); err != nil || !capped {
		t.Errorf("a flag of 1: %v, %v; want true", capped, err)
	}
	if err := (boolInto{&capped}).Scan(int64(0)); err != nil || capped {
		t.Errorf("a flag of 0: %v, %v; want false", capped, err)
	}
	at := time.UnixMilli(1_780_000_000_123)
	var got time.Time
	if err := (millisInto{&got}).Scan(at.UnixMilli()); err != nil || !got.Equal(at) || got != fromMillis(millis(at)) {
		t.Errorf("milliseconds: %v, %v; want %v as fromMillis reads it", got, err, at)
	}
	if err := (millisInto{&got}).Scan(nil); err != nil || !got.IsZero() {
		t.Errorf("a null instant: %v, %v; want the zero time", got, err)
	}
	if err := (millisInto{&got}).Scan("2026-11-29"); err == nil {
		t.Error("an instant from a string: no error")
	}
}
