package store

import (
	"context"
	"time"

	carillonv1 "github.com/carillonhq/carillon/proto/carillon/v1"
)

// watchedRunsSQL reads, through runs_active, the running runs dispatched
// to an executor of an AUTO group of Carillon executors before $1, after
// the run ($2 its triggered_at, $3 its id) in (triggered_at, id) order.
var watchedRunsSQL = `SELECT ` + prefixed("runs.", runColumns) + ` FROM runs JOIN groups g ON g.id = runs.group_id
	WHERE ` + sqlInFlight + ` AND runs.status = ` + sqlRunning + ` AND runs.triggered_at < $1
	AND (runs.triggered_at > $2 OR (runs.triggered_at = $2 AND runs.id > $3))
	AND runs.executor_address != '' AND g.address_mode != $4 AND g.executor_protocol != $5
	ORDER BY runs.triggered_at, runs.id LIMIT $6`

// RunsCursor is where a walk of RunStore.Watched is: after the run of that
// dispatch time and id. Its zero value starts from the first run.
type RunsCursor struct {
	TriggeredAt time.Time
	ID          int64
}

// Watched returns up to limit running runs dispatched before before to
// an executor of an AUTO group of Carillon executors (not XXL_JOB ones,
// which cannot say which runs they hold), oldest dispatch first, after
// cursor: the monitor asks their executors whether they still hold them,
// a page per sweep, so that every such run is asked about however many
// run long. The next page starts after the last run returned; fewer than
// limit runs means the walk reached the end.
func (s RunStore) Watched(ctx context.Context, before time.Time, cursor RunsCursor, limit int) ([]Run, error) {
	after := int64(-1 << 62) // before any run: the zero cursor
	if !cursor.TriggeredAt.IsZero() {
		after = cursor.TriggeredAt.UnixMilli()
	}
	return s.queryRuns(ctx, watchedRunsSQL, before.UnixMilli(), after, cursor.ID,
		carillonv1.AddressMode_ADDRESS_MODE_MANUAL, carillonv1.ExecutorProtocol_EXECUTOR_PROTOCOL_XXL_JOB, limit)
}
