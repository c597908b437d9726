package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/carillonhq/carillon/admin/internal/auth"
	"github.com/carillonhq/carillon/admin/internal/store/dbsqlc"
	carillonv1 "github.com/carillonhq/carillon/proto/carillon/v1"
	"github.com/jackc/pgx/v5/pgconn"
)

// GroupStore keeps executor groups, their tokens and pauses (Store.Groups).
type GroupStore struct{ *db }

// Group is an executor group: the executors of one app name.
type Group struct {
	ID          int64
	AppName     string
	Title       string
	AddressMode carillonv1.AddressMode
	// Addresses are the configured executor URLs of a MANUAL group.
	Addresses []string
	// HasOwnToken says the group has an executor access token of its own
	// (GroupStore.SetToken), which GroupStore.Tokens returns.
	HasOwnToken bool
	// ExecutorProtocol is the protocol the group's executors speak.
	ExecutorProtocol carillonv1.ExecutorProtocol
	// AllowScripts says script jobs of the group are sent to its executors.
	AllowScripts bool
	// PausedAt is when the group was paused (GroupStore.Pause); zero while it
	// is not.
	PausedAt time.Time
	// MaxConcurrency caps the runs of all the group's jobs RUNNING at
	// once; 0 means no cap.
	MaxConcurrency int32
	CreatedAt      time.Time
	UpdatedAt      time.Time
}

// groupOf is the group of a row of dbsqlc.GroupByApp (or GroupByID,
// Groups: the same columns).
func groupOf(r dbsqlc.GroupByAppRow) Group {
	return Group{ID: r.ID, AppName: r.AppName, Title: r.Title, AddressMode: r.AddressMode, Addresses: splitLines(r.Addresses),
		HasOwnToken: r.HasOwnToken, ExecutorProtocol: r.ExecutorProtocol, AllowScripts: r.AllowScripts, PausedAt: fromMillis(r.PausedAt),
		CreatedAt: time.UnixMilli(r.CreatedAt), UpdatedAt: time.UnixMilli(r.UpdatedAt), MaxConcurrency: r.MaxConcurrency}
}

// groupsOf are the groups of rows of dbsqlc.Groups.
func groupsOf(rows []dbsqlc.GroupsRow) []Group {
	gs := make([]Group, len(rows))
	for i, r := range rows {
		gs[i] = groupOf(dbsqlc.GroupByAppRow(r))
	}
	return gs
}

// Create stores g and returns it with its ID. A taken app name is
// ErrAlreadyExists.
func (s GroupStore) Create(ctx context.Context, g Group, now time.Time) (Group, error) {
	defer s.routing.Add(1)
	now = now.Truncate(time.Millisecond) // what the database keeps
	g.CreatedAt, g.UpdatedAt = now, now
	err := s.write(ctx, func(tx *sql.Tx) (err error) {
		g.ID, err = insertGroup(ctx, tx, g)
		return err
	})
	if err != nil {
		if errors.Is(err, ErrAlreadyExists) {
			return Group{}, err
		}
		return Group{}, fmt.Errorf("store: create group: %w", err)
	}
	return g, nil
}

// insertGroup inserts g in tx and returns its ID. A taken app name is
// ErrAlreadyExists.
func insertGroup(ctx context.Context, tx *sql.Tx, g Group) (int64, error) {
	id, err := dbsqlc.New(tx).InsertGroup(ctx, dbsqlc.InsertGroupParams{AppName: g.AppName, Title: g.Title, AddressMode: g.AddressMode,
		Addresses: joinLines(g.Addresses), ExecutorProtocol: g.ExecutorProtocol, AllowScripts: boolInt(g.AllowScripts),
		CreatedAt: g.CreatedAt.UnixMilli(), UpdatedAt: g.UpdatedAt.UnixMilli(), MaxConcurrency: g.MaxConcurrency})
	if isUniqueViolation(err) {
		return 0, fmt.Errorf("%w: a group with app name %q", ErrAlreadyExists, g.AppName)
	}
	return id, err
}

// ByApp returns the group of app name app.
func (s GroupStore) ByApp(ctx context.Context, app string) (Group, error) {
	r, err := dbsqlc.New(s.reader(ctx)).GroupByApp(ctx, app)
	if errors.Is(err, sql.ErrNoRows) {
		return Group{}, fmt.Errorf("%w: group of app %q", ErrNotFound, app)
	}
	if err != nil {
		return Group{}, fmt.Errorf("store: group of app %q: %w", app, err)
	}
	return groupOf(r), nil
}

// Get returns the group with the given ID.
func (s GroupStore) Get(ctx context.Context, id int64) (Group, error) {
	r, err := dbsqlc.New(s.reader(ctx)).GroupByID(ctx, id)
	if errors.Is(err, sql.ErrNoRows) {
		return Group{}, fmt.Errorf("%w: group %d", ErrNotFound, id)
	}
	if err != nil {
		return Group{}, fmt.Errorf("store: group %d: %w", id, err)
	}
	return groupOf(dbsqlc.GroupByAppRow(r)), nil
}

// List returns every group ordered by app name.
func (s GroupStore) List(ctx context.Context) ([]Group, error) {
	rows, err := dbsqlc.New(s.reader(ctx)).Groups(ctx)
	if err != nil {
		return nil, fmt.Errorf("store: groups: %w", err)
	}
	return groupsOf(rows), nil
}

// Update replaces the stored group with ID g.ID. Its jobs' Capped
// follows its MaxConcurrency; the runs waiting for a slot of its jobs are
// for the caller to hand to the scheduler again (FireStore.Waiting), since a
// changed cap may free slots.
func (s GroupStore) Update(ctx context.Context, g Group, now time.Time) (Group, error) {
	defer s.routing.Add(1)
	defer s.jobs.changed()
	now = now.Truncate(time.Millisecond) // what the database keeps
	g.UpdatedAt = now
	err := s.write(ctx, func(tx *sql.Tx) error {
		return updateGroup(ctx, tx, g)
	})
	if err != nil {
		if errors.Is(err, ErrNotFound) || errors.Is(err, ErrAlreadyExists) {
			return Group{}, err
		}
		return Group{}, fmt.Errorf("store: update group %d: %w", g.ID, err)
	}
	return s.Get(ctx, g.ID)
}

// updateGroup is GroupStore.Update in tx, with g.UpdatedAt set; a taken app
// name is ErrAlreadyExists.
func updateGroup(ctx context.Context, tx *sql.Tx, g Group) error {
	q := dbsqlc.New(tx)
	res, err := q.UpdateGroup(ctx, dbsqlc.UpdateGroupParams{AppName: g.AppName, Title: g.Title, AddressMode: g.AddressMode,
		Addresses: joinLines(g.Addresses), ExecutorProtocol: g.ExecutorProtocol, AllowScripts: boolInt(g.AllowScripts),
		UpdatedAt: g.UpdatedAt.UnixMilli(), MaxConcurrency: g.MaxConcurrency, ID: g.ID})
	if isUniqueViolation(err) {
		return fmt.Errorf("%w: a group with app name %q", ErrAlreadyExists, g.AppName)
	}
	if err != nil {
		return err
	}
	if err := mustAffect(res, "group", g.ID); err != nil {
		return err
	}
	return q.CapGroupJobs(ctx, dbsqlc.CapGroupJobsParams{GroupCap: int64(g.MaxConcurrency), GroupID: g.ID})
}

// Delete removes a group. A group that jobs still use is ErrInUse.
func (s GroupStore) Delete(ctx context.Context, id int64) error {
	defer s.routing.Add(1)
	err := s.write(ctx, func(tx *sql.Tx) error {
		q := dbsqlc.New(tx)
		jobs, err := q.GroupJobCount(ctx, id)
		if err != nil {
			return err
		}
		if jobs > 0 {
			return fmt.Errorf("%w: group %d has %d jobs; delete or move them first", ErrInUse, id, jobs)
		}
		workflows, err := q.GroupWorkflowCount(ctx, id)
		if err != nil {
			return err
		}
		if workflows > 0 {
			return fmt.Errorf("%w: group %d has %d workflows; delete or move them first", ErrInUse, id, workflows)
		}
		res, err := q.DeleteGroup(ctx, id)
		if err != nil {
			return err
		}
		return mustAffect(res, "group", id)
	})
	if err != nil && !errors.Is(err, ErrInUse) && !errors.Is(err, ErrNotFound) {
		return fmt.Errorf("store: delete group %d: %w", id, err)
	}
	return err
}

func mustAffect(res sql.Result, what string, id int64) error {
	n, err := res.RowsAffected()
	if err != nil {
		return err
	}
	if n == 0 {
		return fmt.Errorf("%w: %s %d", ErrNotFound, what, id)
	}
	return nil
}

func isUniqueViolation(err error) bool {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		return pe.Code == "23505" // unique_violation
	}
	return err != nil && strings.Contains(err.Error(), "UNIQUE constraint failed")
}

// SetToken sets group id's own executor access token; "" returns the
// group to the global token.
func (s GroupStore) SetToken(ctx context.Context, id int64, token string, now time.Time) error {
	defer s.routing.Add(1)
	err := s.write(ctx, func(tx *sql.Tx) error {
		res, err := dbsqlc.New(tx).SetGroupToken(ctx, dbsqlc.SetGroupTokenParams{ExecutorToken: token, UpdatedAt: now.UnixMilli(), ID: id})
		if err != nil {
			return err
		}
		return mustAffect(res, "group", id)
	})
	if err != nil && !errors.Is(err, ErrNotFound) {
		return fmt.Errorf("store: set group %d token: %w", id, err)
	}
	return err
}

// Tokens returns the groups that have their own executor token, with it.
func (s GroupStore) Tokens(ctx context.Context) ([]auth.GroupToken, error) {
	rows, err := dbsqlc.New(s.reader(ctx)).GroupTokens(ctx)
	if err != nil {
		return nil, fmt.Errorf("store: group tokens: %w", err)
	}
	ts := make([]auth.GroupToken, len(rows))
	for i, r := range rows {
		ts[i] = auth.GroupToken{GroupID: r.ID, AppName: r.AppName, Token: r.ExecutorToken}
	}
	return ts, nil
}

// ResultRun is what a result is checked against before it is settled:
// its run's group, and the executor address the run was sent to.
type ResultRun struct {
	GroupID int64
	// Address is the run's recorded executor, else the route recorded
	// before its call; "" when neither is known (the route of a run an
	// older admin had in flight, RouteAnyExecutor, included).
	Address string
}

// resultRunsSQL reads the ResultRun of each of a JSON list of run IDs;
// pgResultRunsSQL over PostgreSQL.
const (
	resultRunsOf = `SELECT id, group_id,
	CASE WHEN executor_address <> '' THEN executor_address WHEN routed_to <> '` + RouteAnyExecutor + `' THEN routed_to ELSE '' END
	FROM runs WHERE id IN `
	resultRunsSQL   = resultRunsOf + `(SELECT value FROM json_each($1))`
	pgResultRunsSQL = resultRunsOf + `(SELECT value::bigint FROM jsonb_array_elements_text($1::jsonb) AS value)`
)

// Results returns the ResultRun of each of ids that exists. Every
// report of results asks it: its statement is prepared once.
func (s RunStore) Results(ctx context.Context, ids []int64) (map[int64]ResultRun, error) {
	rows, err := s.q.resultRuns.QueryContext(ctx, jsonIDs(ids))
	if err != nil {
		return nil, fmt.Errorf("store: runs of results: %w", err)
	}
	defer rows.Close()
	out := make(map[int64]ResultRun, len(ids))
	for rows.Next() {
		var id int64
		var r ResultRun
		if err := rows.Scan(&id, &r.GroupID, &r.Address); err != nil {
			return nil, fmt.Errorf("store: runs of results: %w", err)
		}
		out[id] = r
	}
	return out, rows.Err()
}
