package testkit

import (
	"io"
	"log/slog"
	"testing"
)

// Logger returns a logger for the parts a test starts: to the test's
// output at level Info under go test -v, otherwise to nowhere.
func Logger(tb testing.TB) *slog.Logger {
	tb.Helper()
	if testing.Verbose() {
		return slog.New(slog.NewTextHandler(tb.Output(), &slog.HandlerOptions{Level: slog.LevelInfo}))
	}
	return slog.New(slog.NewTextHandler(io.Discard, nil))
}
