package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/carillonhq/carillon/admin/internal/store/dbsqlc"
	carillonv1 "github.com/carillonhq/carillon/proto/carillon/v1"
)

// JobStore keeps job definitions and what the fire path caches of them
// (Store.Jobs).
type JobStore struct{ *db }

// Job is a unit of scheduled work.
type Job struct {
	ID              int64
	GroupID         int64
	Description     string
	Owner           string
	AlarmEmails     []string
	ScheduleType    carillonv1.ScheduleType
	Cron            string
	IntervalSeconds int32
	TimeZone        string
	MisfireStrategy carillonv1.MisfireStrategy
	RouteStrategy   carillonv1.RouteStrategy
	Handler         string
	Param           string
	// ParamTemplate says Param is a text/template rendered for each run
	// (package paramtmpl), not sent as it is.
	ParamTemplate   bool
	ScriptType      carillonv1.ScriptType
	ScriptSource    string
	ScriptUpdatedAt time.Time
	BlockStrategy   carillonv1.BlockStrategy
	TimeoutSeconds  int32
	RetryCount      int32
	// RetryDelaySeconds is the delay before a retry; 0 means RetryDelayDefault.
	RetryDelaySeconds int32
	// RetryBackoff doubles the delay after each failed attempt.
	RetryBackoff    bool
	AlarmWebhookURL string
	// AlarmWebhookFormat is what AlarmWebhookURL receives.
	AlarmWebhookFormat carillonv1.AlarmWebhookFormat
	// AlarmWebhookSecret signs what AlarmWebhookURL receives; the API
	// never returns it.
	AlarmWebhookSecret string
	// AlarmWebhookTemplate is the text/template of the TEMPLATE format.
	AlarmWebhookTemplate string
	AlarmEveryFailure    bool
	ChildJobIDs          []int64
	// CalendarIDs are the calendars whose excluded instants the schedule
	// skips.
	CalendarIDs []int64
	Enabled     bool
	// LastFireAt is the scheduled instant of the latest scheduled fire.
	LastFireAt time.Time
	// NextFireAt is the next scheduled instant; zero when nothing is scheduled.
	NextFireAt time.Time
	CreatedAt  time.Time
	UpdatedAt  time.Time
	// MaxConcurrency caps the job's runs RUNNING at once; 0 means no cap.
	MaxConcurrency int32
	// Capped says the job or its group has a concurrency cap: its fires
	// take the claims that count slots (caps.go). The store sets it from
	// MaxConcurrency and the group's when it writes the job.
	Capped bool
	// Name is unique within the group when not empty (a second is
	// ErrAlreadyExists); `carillon apply` identifies jobs by it.
	Name string
}

// jobWriteColumns are the columns of jobs that a job's write sets: all
// but id. Its child jobs are rows of job_children (children.go).
const jobWriteColumns = `group_id, description, owner, alarm_emails, schedule_type, cron, interval_seconds, time_zone,
	misfire_strategy, route_strategy, handler, param, script_type, script_source, script_updated_at, block_strategy,
	timeout_seconds, retry_count, retry_delay_seconds, retry_backoff, alarm_webhook_url, alarm_every_failure,
	enabled, last_fire_at, next_fire_at, created_at, updated_at, param_template, calendar_ids, max_concurrency, capped,
	alarm_webhook_format, alarm_webhook_secret, alarm_webhook_template, name`

// jobColumns read a job (scanJob) from jobs: its id, jobWriteColumns and
// its child jobs (jobChildrenSQL).
const jobColumns = `id, ` + jobWriteColumns + `, ` + jobChildrenSQL

// jobWriteArgs is how many values jobWriteColumns has (jobArgs).
var jobWriteArgs = strings.Count(jobWriteColumns, ",") + 1

var (
	// insertJobSQL stores a new job, RETURNING its id.
	insertJobSQL = `INSERT INTO jobs (` + jobWriteColumns + `) VALUES (` + placeholders(1, jobWriteArgs) + `) RETURNING id` //nolint:gosec // concatenates constant SQL fragments; values are placeholders
	// updateJobSQL writes a job: jobArgs, then its id.
	updateJobSQL = `UPDATE jobs SET (` + jobWriteColumns + `) = (` + placeholders(1, jobWriteArgs) + `) WHERE id = $` + strconv.Itoa(jobWriteArgs+1) //nolint:gosec // concatenates constant SQL fragments; values are placeholders
)

func scanJob(row interface{ Scan(...any) error }) (Job, error) {
	var j Job
	var emails, children, calendars string
	var scriptUpdated, last, next, created, updated sql.NullInt64
	err := row.Scan(&j.ID, &j.GroupID, &j.Description, &j.Owner, &emails, &j.ScheduleType, &j.Cron, &j.IntervalSeconds,
		&j.TimeZone, &j.MisfireStrategy, &j.RouteStrategy, &j.Handler, &j.Param, &j.ScriptType, &j.ScriptSource,
		&scriptUpdated, &j.BlockStrategy, &j.TimeoutSeconds, &j.RetryCount, &j.RetryDelaySeconds, &j.RetryBackoff, &j.AlarmWebhookURL,
		&j.AlarmEveryFailure, &j.Enabled, &last, &next,
		&created, &updated, &j.ParamTemplate, &calendars, &j.MaxConcurrency, &j.Capped,
		&j.AlarmWebhookFormat, &j.AlarmWebhookSecret, &j.AlarmWebhookTemplate, &j.Name, &children)
	if err != nil {
		return Job{}, err
	}
	j.CalendarIDs = parseIDs(calendars)
	j.AlarmEmails = splitLines(emails)
	j.ChildJobIDs = parseIDs(children)
	j.ScriptUpdatedAt, j.LastFireAt, j.NextFireAt = fromMillis(scriptUpdated), fromMillis(last), fromMillis(next)
	j.CreatedAt, j.UpdatedAt = fromMillis(created), fromMillis(updated)
	return j, nil
}

// jobArgs are j's values for jobWriteColumns.
func jobArgs(j Job) []any {
	return []any{j.GroupID, j.Description, j.Owner, joinLines(j.AlarmEmails), j.ScheduleType, j.Cron, j.IntervalSeconds,
		j.TimeZone, j.MisfireStrategy, j.RouteStrategy, j.Handler, j.Param, j.ScriptType, j.ScriptSource,
		millis(j.ScriptUpdatedAt), j.BlockStrategy, j.TimeoutSeconds, j.RetryCount, j.RetryDelaySeconds, boolInt(j.RetryBackoff),
		j.AlarmWebhookURL, boolInt(j.AlarmEveryFailure), boolInt(j.Enabled),
		millis(j.LastFireAt), millis(j.NextFireAt), millis(j.CreatedAt), millis(j.UpdatedAt), boolInt(j.ParamTemplate), formatIDs(j.CalendarIDs),
		j.MaxConcurrency, boolInt(j.Capped), j.AlarmWebhookFormat, j.AlarmWebhookSecret, j.AlarmWebhookTemplate, j.Name}
}

// Create stores j and returns it with its ID. The caller sets NextFireAt
// for an enabled job. A missing group is ErrGroupNotFound.
func (s JobStore) Create(ctx context.Context, j Job, now time.Time) (Job, error) {
	now = now.Truncate(time.Millisecond) // what the database keeps
	j.CreatedAt, j.UpdatedAt = now, now
	err := s.write(ctx, func(tx *sql.Tx) error {
		return insertJob(ctx, tx, &j)
	})
	if err != nil {
		if errors.Is(err, ErrGroupNotFound) || errors.Is(err, ErrCalendarNotFound) || errors.Is(err, ErrAlreadyExists) || errors.Is(err, ErrNotFound) {
			return Job{}, err
		}
		return Job{}, fmt.Errorf("store: create job: %w", err)
	}
	return j, nil
}

// insertJob inserts j in tx and sets its ID and Capped. A missing group
// is ErrGroupNotFound.
func insertJob(ctx context.Context, tx *sql.Tx, j *Job) error {
	groupCap, err := groupCap(ctx, tx, j.GroupID)
	if err != nil {
		return err
	}
	if err := calendarsExist(ctx, tx, j.CalendarIDs); err != nil {
		return err
	}
	j.Capped = j.MaxConcurrency > 0 || groupCap > 0
	if err := nameTaken(tx.QueryRowContext(ctx, insertJobSQL, jobArgs(*j)...).Scan(&j.ID), *j); err != nil {
		return err
	}
	if len(j.ChildJobIDs) == 0 {
		return nil
	}
	return setChildren(ctx, tx, j.ID, j.ChildJobIDs)
}

// nameTaken turns the unique violation of a job's name in its group into
// ErrAlreadyExists naming it; other errors pass unchanged.
func nameTaken(err error, j Job) error {
	if isUniqueViolation(err) {
		return fmt.Errorf("%w: job.name: group %d has a job named %q already", ErrAlreadyExists, j.GroupID, j.Name)
	}
	return err
}

func groupExists(ctx context.Context, tx *sql.Tx, id int64) error {
	_, err := groupCap(ctx, tx, id)
	return err
}

// groupCap returns group id's max_concurrency; ErrGroupNotFound if there
// is no such group.
func groupCap(ctx context.Context, tx *sql.Tx, id int64) (int32, error) {
	n, err := dbsqlc.New(tx).GroupCap(ctx, id)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, fmt.Errorf("%w: group %d", ErrGroupNotFound, id)
	}
	return n, err
}

// Get returns the job with the given ID.
func (s JobStore) Get(ctx context.Context, id int64) (Job, error) {
	j, err := scanJob(s.reader(ctx).QueryRowContext(ctx, `SELECT `+jobColumns+` FROM jobs WHERE id = $1`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return Job{}, fmt.Errorf("%w: job %d", ErrNotFound, id)
	}
	if err != nil {
		return Job{}, fmt.Errorf("store: job %d: %w", id, err)
	}
	return j, nil
}

// GetAll returns the jobs with the given IDs that exist, by ID, read in
// one statement: the jobs of a batch of alarms (alarm.Sender), where a
// Get each cost more than the rest of an alarm that goes nowhere.
func (s JobStore) GetAll(ctx context.Context, ids []int64) (map[int64]*Job, error) {
	jobs, err := collectJobs(s.q.jobsByID.QueryContext(ctx, jsonIDs(ids)))
	if err != nil {
		return nil, fmt.Errorf("store: %d jobs by ID: %w", len(ids), err)
	}
	return jobs, nil
}

// JobFilter selects jobs for Jobs. Zero fields select everything.
type JobFilter struct {
	GroupID int64
	Enabled *bool
	Handler string
	// Text matches a substring of description, owner or handler.
	Text string
	// AfterID pages: only jobs with a larger ID.
	AfterID int64
	Limit   int
}

// List returns the jobs f selects, ordered by ID.
func (s JobStore) List(ctx context.Context, f JobFilter) ([]Job, error) {
	var a args
	where := []string{"id > " + a.add(f.AfterID)}
	if f.GroupID != 0 {
		where = append(where, "group_id = "+a.add(f.GroupID))
	}
	if f.Enabled != nil {
		where = append(where, "enabled = "+a.add(boolInt(*f.Enabled)))
	}
	if f.Handler != "" {
		where = append(where, "handler = "+a.add(f.Handler))
	}
	if f.Text != "" {
		like, op := a.add("%"+escapeLike(f.Text)+"%"), s.d.likeFold()
		where = append(where, `(description `+op+` `+like+` ESCAPE '\' OR owner `+op+` `+like+` ESCAPE '\' OR handler `+op+` `+like+` ESCAPE '\')`)
	}
	rows, err := s.reader(ctx).QueryContext(ctx, `SELECT `+jobColumns+` FROM jobs WHERE `+strings.Join(where, " AND ")+` ORDER BY id LIMIT `+a.add(cmpLimit(f.Limit)), a...)
	if err != nil {
		return nil, fmt.Errorf("store: jobs: %w", err)
	}
	defer rows.Close()
	var js []Job
	for rows.Next() {
		j, err := scanJob(rows)
		if err != nil {
			return nil, fmt.Errorf("store: jobs: %w", err)
		}
		js = append(js, j)
	}
	return js, rows.Err()
}

// Update replaces the stored job with ID j.ID (CreatedAt, LastFireAt
// and Enabled are kept) and drops the job's pending runs, so no fire read
// ahead under the old definition is dispatched. When scheduleChanged is
// false the job's next fire is the earliest dropped pending instant (the
// scheduler reads it again with the new definition); otherwise it is
// j.NextFireAt. An update that changes what a run's request carries to its
// executor (runsChanged) is marked for UpdatedSince.
func (s JobStore) Update(ctx context.Context, j Job, scheduleChanged bool, now time.Time) (Job, error) {
	defer s.jobs.changed()
	now = now.Truncate(time.Millisecond) // what the database keeps
	var replace bool
	err := s.write(ctx, func(tx *sql.Tx) error {
		var err error
		replace, err = updateJob(ctx, tx, &j, scheduleChanged, now)
		return err
	})
	if err != nil {
		if errors.Is(err, ErrNotFound) || errors.Is(err, ErrGroupNotFound) || errors.Is(err, ErrCalendarNotFound) || errors.Is(err, ErrAlreadyExists) {
			return Job{}, err
		}
		return Job{}, fmt.Errorf("store: update job %d: %w", j.ID, err)
	}
	s.jobs.changed() // before the mark: a run sent again reads the new definition
	if replace {
		s.stops.markUpdate(j.ID)
	}
	return j, nil
}

// updateJob is JobStore.Update in tx, now truncated to the millisecond: it
// completes j as stored and reports whether the update replaces the runs
// sent ahead (runsChanged), for the caller to mark once tx commits.
func updateJob(ctx context.Context, tx *sql.Tx, j *Job, scheduleChanged bool, now time.Time) (bool, error) {
	old, err := scanJob(tx.QueryRowContext(ctx, `SELECT `+jobColumns+` FROM jobs WHERE id = $1`, j.ID))
	if errors.Is(err, sql.ErrNoRows) {
		return false, fmt.Errorf("%w: job %d", ErrNotFound, j.ID)
	}
	if err != nil {
		return false, err
	}
	groupCap, err := groupCap(ctx, tx, j.GroupID)
	if err != nil {
		return false, err
	}
	if err := calendarsExist(ctx, tx, j.CalendarIDs); err != nil {
		return false, err
	}
	j.Capped = j.MaxConcurrency > 0 || groupCap > 0
	j.CreatedAt, j.LastFireAt, j.Enabled, j.UpdatedAt = old.CreatedAt, old.LastFireAt, old.Enabled, now
	replace := runsChanged(old, *j)
	earliest, err := dropPending(ctx, tx, j.ID)
	if err != nil {
		return false, err
	}
	switch {
	case !j.Enabled:
		j.NextFireAt = time.Time{}
	case !scheduleChanged && !earliest.IsZero():
		j.NextFireAt = earliest
	case !scheduleChanged:
		j.NextFireAt = old.NextFireAt
	}
	args := append(jobArgs(*j), j.ID)
	_, err = tx.ExecContext(ctx, updateJobSQL, args...)
	if err := nameTaken(err, *j); err != nil {
		return false, err
	}
	if slices.Equal(old.ChildJobIDs, j.ChildJobIDs) {
		return replace, nil
	}
	return replace, setChildren(ctx, tx, j.ID, j.ChildJobIDs)
}

// runsChanged reports whether job b differs from job a in what a run's
// request carries to its executor (the trigger's runRequest): handler,
// param, block strategy, timeout, script (type, source and its time, to
// the millisecond the database keeps). Only such an update replaces the
// runs sent ahead of their instant (UpdatedSince); one of anything else
// (description, owner, alarms, schedule, routing, retries, child jobs)
// leaves them as they were sent. PostgreSQL's job_changes trigger
// compares the same columns, for the other admins sharing the database
// (follow).
func runsChanged(a, b Job) bool {
	return a.Handler != b.Handler || a.Param != b.Param || a.BlockStrategy != b.BlockStrategy ||
		a.TimeoutSeconds != b.TimeoutSeconds || a.ScriptType != b.ScriptType || a.ScriptSource != b.ScriptSource ||
		millis(a.ScriptUpdatedAt) != millis(b.ScriptUpdatedAt) || a.ParamTemplate != b.ParamTemplate ||
		(a.ParamTemplate || b.ParamTemplate) && a.TimeZone != b.TimeZone
}

// dropPending deletes the job's pending runs and returns the earliest
// scheduled instant among them (zero if there were none), backfill runs
// left out of it: their instants are past ones, not the schedule's next.
// The pending runs of workflow nodes are the workflow run's, and stay.
func dropPending(ctx context.Context, tx *sql.Tx, jobID int64) (time.Time, error) {
	var earliest sql.NullInt64
	err := tx.QueryRowContext(ctx, `SELECT min(scheduled_at) FROM runs WHERE job_id = $1 AND status = $2 AND workflow_run_id = 0 AND trigger_type <> $3`,
		jobID, carillonv1.RunStatus_RUN_STATUS_PENDING, carillonv1.TriggerType_TRIGGER_TYPE_BACKFILL).Scan(&earliest)
	if err != nil {
		return time.Time{}, err
	}
	err = dbsqlc.New(tx).DeletePending(ctx, dbsqlc.DeletePendingParams{JobID: jobID, Status: carillonv1.RunStatus_RUN_STATUS_PENDING})
	return fromMillis(earliest), err
}

// Start enables a stopped job with next as its first fire (zero when
// the schedule has none). Starting a started job changes nothing.
func (s JobStore) Start(ctx context.Context, id int64, next, now time.Time) (Job, error) {
	defer s.jobs.changed()
	err := s.write(ctx, func(tx *sql.Tx) error {
		return startJob(ctx, tx, id, next, now)
	})
	if err != nil {
		return Job{}, wrapJobErr("start", id, err)
	}
	return s.Get(ctx, id)
}

// startJob is JobStore.Start in tx.
func startJob(ctx context.Context, tx *sql.Tx, id int64, next, now time.Time) error {
	res, err := dbsqlc.New(tx).StartJob(ctx, dbsqlc.StartJobParams{NextFireAt: millis(next), UpdatedAt: now.UnixMilli(), ID: id})
	if err != nil {
		return err
	}
	if n, err := res.RowsAffected(); err != nil || n > 0 {
		return err
	}
	return jobExists(ctx, tx, id)
}

// Stop disables a job and drops its pending runs: once JobStore.Stop returns,
// no scheduled fire of the job is dispatched.
func (s JobStore) Stop(ctx context.Context, id int64, now time.Time) (Job, error) {
	defer s.jobs.changed()
	err := s.write(ctx, func(tx *sql.Tx) error {
		return stopJob(ctx, tx, id, now)
	})
	if err != nil {
		return Job{}, wrapJobErr("stop", id, err)
	}
	s.stops.mark(id)
	return s.Get(ctx, id)
}

// stopJob is JobStore.Stop in tx.
func stopJob(ctx context.Context, tx *sql.Tx, id int64, now time.Time) error {
	if err := jobExists(ctx, tx, id); err != nil {
		return err
	}
	if _, err := dropPending(ctx, tx, id); err != nil {
		return err
	}
	return dbsqlc.New(tx).StopJob(ctx, dbsqlc.StopJobParams{UpdatedAt: now.UnixMilli(), ID: id})
}

// Delete removes a job and its pending runs; its other runs are kept.
func (s JobStore) Delete(ctx context.Context, id int64) error {
	defer s.jobs.changed()
	err := s.write(ctx, func(tx *sql.Tx) error {
		return deleteJob(ctx, tx, id)
	})
	if err == nil {
		s.stops.mark(id)
	}
	return wrapJobErr("delete", id, err)
}

// deleteJob is JobStore.Delete in tx; the caller marks the job stopped once tx
// commits.
func deleteJob(ctx context.Context, tx *sql.Tx, id int64) error {
	if err := notAChild(ctx, tx, id); err != nil {
		return err
	}
	if err := notInWorkflow(ctx, tx, id); err != nil {
		return err
	}
	if _, err := dropPending(ctx, tx, id); err != nil {
		return err
	}
	res, err := dbsqlc.New(tx).DeleteJob(ctx, id)
	if err != nil {
		return err
	}
	return mustAffect(res, "job", id)
}

// jobExists returns ErrNotFound unless job id exists.
func jobExists(ctx context.Context, tx *sql.Tx, id int64) error {
	n, err := dbsqlc.New(tx).JobCount(ctx, id)
	if err != nil {
		return err
	}
	if n == 0 {
		return fmt.Errorf("%w: job %d", ErrNotFound, id)
	}
	return nil
}

func wrapJobErr(verb string, id int64, err error) error {
	if err == nil || errors.Is(err, ErrNotFound) || errors.Is(err, ErrInUse) {
		return err
	}
	return fmt.Errorf("store: %s job %d: %w", verb, id, err)
}

// Count returns the number of jobs of g's groups and of enabled ones.
func (s JobStore) Count(ctx context.Context, g Groups) (all, enabled int64, err error) {
	var a args
	cond := g.where(s.d, &a, "group_id")
	err = s.reader(ctx).QueryRowContext(ctx, `SELECT count(*), coalesce(sum(enabled), 0) FROM jobs WHERE 1 = 1`+cond, a...).Scan(&all, &enabled) //nolint:gosec // concatenates constant SQL fragments; values are placeholders
	if err != nil {
		return 0, 0, fmt.Errorf("store: count jobs: %w", err)
	}
	return all, enabled, nil
}

func formatIDs(ids []int64) string {
	ss := make([]string, len(ids))
	for i, id := range ids {
		ss[i] = strconv.FormatInt(id, 10)
	}
	return strings.Join(ss, ",")
}

func parseIDs(s string) []int64 {
	if s == "" {
		return nil
	}
	var ids []int64
	for _, f := range strings.Split(s, ",") {
		if id, err := strconv.ParseInt(f, 10, 64); err == nil {
			ids = append(ids, id)
		}
	}
	return ids
}

func escapeLike(s string) string {
	return strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`).Replace(s)
}

// cmpLimit bounds a page size: 0 means 100, and at most 1000.
func cmpLimit(n int) int {
	switch {
	case n <= 0:
		return 100
	case n > 1000:
		return 1000
	}
	return n
}
