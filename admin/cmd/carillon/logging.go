package main

import (
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"time"

	"golang.org/x/term"
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

// isTerminal tells whether w is a terminal: where a person reads what the
// admin prints once (a generated password), not a log pipeline.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd())) //nolint:gosec // a file descriptor fits an int
}

// jsonConsole turns each notice the admin writes to its Console (one Write
// each) into one JSON object a line, like the records of --log-format
// json, so that every line of that format is JSON.
type jsonConsole struct{ w io.Writer }

// Write writes p, a notice, as {"time":…,"level":"INFO","msg":…}: its
// lines joined by spaces, indentation dropped.
func (c jsonConsole) Write(p []byte) (int, error) {
	msg := strings.Join(strings.Fields(string(p)), " ")
	if msg == "" {
		return len(p), nil
	}
	b, err := json.Marshal(struct {
		Time  string `json:"time"`
		Level string `json:"level"`
		Msg   string `json:"msg"`
	}{time.Now().Format(time.RFC3339Nano), slog.LevelInfo.String(), msg})
	if err != nil {
		return 0, err
	}
	if _, err := c.w.Write(append(b, '\n')); err != nil {
		return 0, err
	}
	return len(p), nil
}
