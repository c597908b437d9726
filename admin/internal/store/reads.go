package store

import (
	"context"
	"database/sql"
)

// APIReadConns is how many connections serve the reads of the management
// API (see WithAPIReads), apart from the scheduler's and the trigger's.
const APIReadConns = 4

// apiReadsKey marks a context whose reads use the API's connections.
type apiReadsKey struct{}

// WithAPIReads returns a context whose reads through the Store use the
// connections kept for the management API (APIReadConns of them), not the
// ones of the fire path (the scheduler's scan, the trigger, the monitor).
// A slow API read, such as a ListRuns over millions of runs, then waits for
// and holds only the API's connections, never the scan's. Writes are not
// affected: every write goes through the one writer connection.
func WithAPIReads(ctx context.Context) context.Context {
	return context.WithValue(ctx, apiReadsKey{}, true)
}

// reader returns the connections a read made with ctx uses: the API's for
// a context from WithAPIReads, the fire path's otherwise.
func (s *db) reader(ctx context.Context) *sql.DB {
	if api, _ := ctx.Value(apiReadsKey{}).(bool); api && s.api != nil {
		return s.api
	}
	return s.r
}
