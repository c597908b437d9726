package runlog

import (
	"context"
	"log/slog"
	"time"
)

// cleanInterval is how often CleanLoop deletes old logs.
const cleanInterval = time.Hour

// CleanLoop deletes run logs older than retention at once, then every hour,
// until ctx ends.
func CleanLoop(ctx context.Context, logs *Store, retention time.Duration, log *slog.Logger) {
	t := time.NewTicker(cleanInterval)
	defer t.Stop()
	for {
		removed, err := logs.Clean(retention)
		if err != nil {
			log.Warn("sdk: clean run logs", "err", err)
		}
		if len(removed) > 0 {
			log.Info("sdk: deleted old run logs", "days", removed)
		}
		select {
		case <-t.C:
		case <-ctx.Done():
			return
		}
	}
}
