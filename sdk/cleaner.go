package sdk

import (
	"context"
	"log/slog"
	"time"
)

// cleanLogs deletes run logs older than retention at once, then every hour,
// until ctx ends.
func cleanLogs(ctx context.Context, logs *logStore, retention time.Duration, log *slog.Logger) {
	t := time.NewTicker(logCleanInterval)
	defer t.Stop()
	for {
		removed, err := logs.clean(retention)
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
