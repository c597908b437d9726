package main

import (
	"fmt"
	"io"
	"log/slog"
)

// Values of --log-format.
const (
	logFormatText = "text"
	logFormatJSON = "json"
)

// newLogHandler returns the slog handler of the admin's log on w: level
// ("debug", "info", "warn", "error") and format (logFormatText, key=value
// lines; logFormatJSON, one JSON object a line).
func newLogHandler(w io.Writer, level, format string) (slog.Handler, error) {
	var l slog.Level
	if err := l.UnmarshalText([]byte(level)); err != nil {
		return nil, fmt.Errorf("--log-level: %w", err)
	}
	opts := &slog.HandlerOptions{Level: l}
	switch format {
	case logFormatText:
		return slog.NewTextHandler(w, opts), nil
	case logFormatJSON:
		return slog.NewJSONHandler(w, opts), nil
	}
	return nil, fmt.Errorf("--log-format %q: want %s or %s", format, logFormatText, logFormatJSON)
}
