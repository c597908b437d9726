package sdk

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"log/slog"
	"time"
)

// heartbeat registers with the admin at once, then every interval, until
// ctx ends. Registering is the heartbeat: the admin forgets an executor it
// has not heard from for 90 seconds. instance is the id of this Serve (see
// newInstanceID), the same in every heartbeat. Each heartbeat carries the
// clock offset the previous one measured (clock.go). Between heartbeats,
// a run from an admin whose id is not known yet makes it ask the admins
// (admins.discover).
func heartbeat(ctx context.Context, adm *admins, app, address, instance string, interval time.Duration, log *slog.Logger) {
	t := time.NewTicker(interval)
	defer t.Stop()
	ok := false
	var clk clockReading
	for {
		next, err := adm.register(ctx, app, address, instance, clk)
		adm.discover(ctx, app, address, instance, clk)
		clk = next
		switch {
		case ctx.Err() != nil:
			return
		case err != nil:
			log.Warn("sdk: heartbeat", "err", err)
			ok = false
		case !ok:
			log.Info("sdk: registered with the admin")
			ok = true
		}
		for waiting := true; waiting; {
			select {
			case <-t.C:
				waiting = false
			case <-adm.unknownSeen: // a run from an admin whose id is not known
				adm.discover(ctx, app, address, instance, clk)
			case <-ctx.Done():
				return
			}
		}
	}
}

// newInstanceID returns a new random id for one start of the executor
// (RegisterRequest.instance_id): 128 bits from crypto/rand, in hex. An
// admin that sees an address register with a new id knows the executor
// there restarted, and what the previous process held is gone.
func newInstanceID() string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // never fails: see crypto/rand.Read
	return hex.EncodeToString(b[:])
}
