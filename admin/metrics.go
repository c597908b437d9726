package admin

import (
	"log/slog"
	"net/http"
	"time"
)

// newMetricsServer serves the metrics handler at /metrics, and nothing
// else, on the metrics listener (Config.MetricsListen).
func newMetricsServer(h http.Handler, log *slog.Logger) *http.Server {
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", h)
	return &http.Server{
		Handler:           mux,
		ReadHeaderTimeout: 10 * time.Second,
		WriteTimeout:      30 * time.Second,
		IdleTimeout:       2 * time.Minute,
		MaxHeaderBytes:    16 << 10,
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelWarn),
	}
}
