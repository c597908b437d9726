package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"
)

// Import is a set of groups and jobs to create together (JobStore.Import). Its
// IDs are those of the source: a group's ID names it for its jobs' GroupID,
// a job's ID names it for other jobs' ChildJobIDs.
type Import struct {
	Groups []Group
	Jobs   []Job
}

// Imported is what JobStore.Import created: the groups and jobs of the Import,
// in its order, with their new IDs, and the new ID of each source ID.
type Imported struct {
	Groups   []Group
	Jobs     []Job
	GroupIDs map[int64]int64
	JobIDs   map[int64]int64
}

// Import creates in one transaction the groups of im and their jobs,
// with their group and child IDs remapped to the new ones. The caller has
// checked them: every GroupID names a group of im and every child ID a job
// of im. A taken app name is ErrAlreadyExists, and then nothing is created.
func (s JobStore) Import(ctx context.Context, im Import, now time.Time) (Imported, error) {
	defer s.routing.Add(1)
	now = now.Truncate(time.Millisecond) // what the database keeps
	var out Imported
	err := s.write(ctx, func(tx *sql.Tx) error {
		out = Imported{GroupIDs: make(map[int64]int64, len(im.Groups)), JobIDs: make(map[int64]int64, len(im.Jobs))}
		for _, g := range im.Groups {
			src := g.ID
			g.CreatedAt, g.UpdatedAt = now, now
			id, err := insertGroup(ctx, tx, g)
			if err != nil {
				return err
			}
			g.ID, out.GroupIDs[src] = id, id
			out.Groups = append(out.Groups, g)
		}
		for _, j := range im.Jobs {
			src, children := j.ID, j.ChildJobIDs
			group, ok := out.GroupIDs[j.GroupID]
			if !ok {
				return fmt.Errorf("%w: group %d of job %d is not imported", ErrGroupNotFound, j.GroupID, src)
			}
			j.GroupID, j.ChildJobIDs, j.CreatedAt, j.UpdatedAt = group, nil, now, now
			if err := insertJob(ctx, tx, &j); err != nil {
				return err
			}
			j.ChildJobIDs, out.JobIDs[src] = children, j.ID
			out.Jobs = append(out.Jobs, j)
		}
		for i := range out.Jobs {
			j := &out.Jobs[i]
			if len(j.ChildJobIDs) == 0 {
				continue
			}
			children := make([]int64, len(j.ChildJobIDs))
			for k, c := range j.ChildJobIDs {
				if children[k] = out.JobIDs[c]; children[k] == 0 {
					return fmt.Errorf("%w: child job %d of job %d is not imported", ErrNotFound, c, j.ID)
				}
			}
			j.ChildJobIDs = children
			if err := setChildren(ctx, tx, j.ID, children); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		if errors.Is(err, ErrAlreadyExists) || errors.Is(err, ErrGroupNotFound) || errors.Is(err, ErrNotFound) {
			return Imported{}, err
		}
		return Imported{}, fmt.Errorf("store: import jobs: %w", err)
	}
	return out, nil
}
