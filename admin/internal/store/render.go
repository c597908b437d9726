package store

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/carillonhq/carillon/admin/internal/store/dbsqlc"
)

// Rendered is a run's param as rendered from its job's template
// (Run.RenderedParam).
type Rendered struct {
	RunID int64
	Param string
}

// RenderParams records the params rendered for runs of jobs whose param
// is a template, before the runs are routed and sent: the run keeps what
// its executor got, and a run sent again (after a restart or an admin's
// death) is sent with it, not rendered again. Only the fires of template
// jobs come here: other runs cost nothing.
func (s RunStore) RenderParams(ctx context.Context, rs []Rendered) error {
	if len(rs) == 0 {
		return nil
	}
	err := s.write(ctx, func(tx *sql.Tx) error {
		q := dbsqlc.New(tx)
		for _, r := range rs {
			if err := q.RecordRenderedParam(ctx, dbsqlc.RecordRenderedParamParams{RenderedParam: r.Param, ID: r.RunID}); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("store: record rendered params: %w", err)
	}
	return nil
}
