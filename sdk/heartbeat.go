package sdk

import (
	"context"
	"log/slog"
	"time"
)

// heartbeat registers with the admin at once, then every interval, until
// ctx ends. Registering is the heartbeat: the admin forgets an executor it
// has not heard from for 90 seconds.
func heartbeat(ctx context.Context, adm *admins, app, address string, interval time.Duration, log *slog.Logger) {
	t := time.NewTicker(interval)
	defer t.Stop()
	ok := false
	for {
		err := adm.register(ctx, app, address)
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
		select {
		case <-t.C:
		case <-ctx.Done():
			return
		}
	}
}
