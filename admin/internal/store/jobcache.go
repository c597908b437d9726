package store

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	carillonv1 "github.com/carillonhq/carillon/proto/carillon/v1"
)

// jobCacheMax bounds the job definitions kept: past it the cache starts
// over, so a million sparse jobs never all sit in memory. It holds a burst
// of 100,000 fires on one instant (sent, then settled, each reading its
// jobs): at 50,000 the cache started over within every burst, and each
// one read its jobs twice from the database (600 MB of garbage, issue 20).
const jobCacheMax = 200_000

// jobCache keeps job definitions for the fire path, which reads the same
// jobs at every fire (to send a run, and to settle it). A definition
// changes only through JobStore.Update, JobStore.Start, JobStore.Stop and JobStore.Delete, each of
// which bumps version after its write: a definition read after the
// version was v is current while it is still v. Creating a job changes no
// cached definition (a job ID is never reused, and a miss is not cached),
// so JobStore.Create(s) leave the cache alone.
type jobCache struct {
	version atomic.Int64

	mu    sync.Mutex
	at    int64                    // the version the entries were read at
	byID  map[int64]*JobDefinition // shared with the callers, never changed
	reads atomic.Int64             // jobs read from the database, for tests
}

// changed marks every cached definition stale; call it after a job write.
func (c *jobCache) changed() { c.version.Add(1) }

// get returns the cached definitions of ids current at version v, and
// the IDs it does not have.
func (c *jobCache) get(ids []int64, v int64) (map[int64]*JobDefinition, []int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.at != v {
		c.at, c.byID = v, nil
	}
	found := make(map[int64]*JobDefinition, len(ids))
	var missing []int64
	for _, id := range ids {
		if j, ok := c.byID[id]; ok {
			found[id] = j
		} else {
			missing = append(missing, id)
		}
	}
	return found, missing
}

// put caches definitions read at version v, unless a job changed since.
func (c *jobCache) put(jobs map[int64]*JobDefinition, v int64) {
	c.reads.Add(int64(len(jobs)))
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.at != v {
		return
	}
	if c.byID == nil || len(c.byID)+len(jobs) > jobCacheMax {
		c.byID = make(map[int64]*JobDefinition, len(jobs))
	}
	for id, j := range jobs {
		c.byID[id] = j
	}
}

// definitions returns the definitions of the jobs with the given IDs that
// exist, by ID, through the cache; read reads the jobs it lacks. The
// definitions are the cache's own: the caller must not change them.
func (c *jobCache) definitions(ids []int64, read func(ids []int64) (map[int64]*Job, error)) (map[int64]*JobDefinition, error) {
	v := c.version.Load()
	found, missing := c.get(ids, v)
	if len(missing) == 0 {
		return found, nil
	}
	jobs, err := read(missing)
	if err != nil {
		return nil, err
	}
	defs := make(map[int64]*JobDefinition, len(jobs))
	for id, j := range jobs {
		defs[id] = j.Definition()
		found[id] = defs[id]
	}
	c.put(defs, v)
	return found, nil
}

// JobDefinition is what the fire path reads of a job (JobStore.Definitions): how
// its runs are routed, sent and followed up. It is less than half a Job,
// and the job cache keeps one for every job a burst fires (100,000 jobs:
// 17 MB of definitions rather than 44 MB of jobs).
type JobDefinition struct {
	ID      int64
	GroupID int64
	Handler string
	Param   string
	// ParamTemplate, TimeZone and UpdatedAt are read for a param template
	// (Job.ParamTemplate): its zone, and the definition it is cached for.
	ParamTemplate   bool
	TimeZone        string
	UpdatedAt       time.Time
	ScriptSource    string
	ScriptUpdatedAt time.Time
	ChildJobIDs     []int64
	ScheduleType    carillonv1.ScheduleType
	MisfireStrategy carillonv1.MisfireStrategy
	RouteStrategy   carillonv1.RouteStrategy
	ScriptType      carillonv1.ScriptType
	BlockStrategy   carillonv1.BlockStrategy
	IntervalSeconds int32
	TimeoutSeconds  int32
	RetryCount      int32
	// RetryDelaySeconds is the delay before a retry; 0 means RetryDelayDefault.
	RetryDelaySeconds int32
	RetryBackoff      bool
	AlarmEveryFailure bool
	// Alarmed says the job names recipients of its alarms (e-mails or a
	// webhook).
	Alarmed bool
	Enabled bool
	// Capped says the job or its group has a concurrency cap (Job.Capped).
	Capped bool
}

// Definition returns the definition of j, what the fire path reads of it.
func (j *Job) Definition() *JobDefinition {
	return &JobDefinition{
		ID: j.ID, GroupID: j.GroupID, Handler: j.Handler, Param: j.Param, ScriptSource: j.ScriptSource, ScriptUpdatedAt: j.ScriptUpdatedAt,
		ChildJobIDs: j.ChildJobIDs, ScheduleType: j.ScheduleType, MisfireStrategy: j.MisfireStrategy, RouteStrategy: j.RouteStrategy,
		ScriptType: j.ScriptType, BlockStrategy: j.BlockStrategy, IntervalSeconds: j.IntervalSeconds, TimeoutSeconds: j.TimeoutSeconds,
		RetryCount: j.RetryCount, RetryDelaySeconds: j.RetryDelaySeconds, RetryBackoff: j.RetryBackoff,
		AlarmEveryFailure: j.AlarmEveryFailure, Alarmed: len(j.AlarmEmails) > 0 || j.AlarmWebhookURL != "", Enabled: j.Enabled, Capped: j.Capped,
		ParamTemplate: j.ParamTemplate, TimeZone: j.TimeZone, UpdatedAt: j.UpdatedAt,
	}
}

// Definitions returns the definitions of the jobs with the given IDs
// that exist, by ID, as the fire path needs them: from a cache kept
// current by this Store's job writes. The definitions are shared with the
// cache, not copied for each caller (a burst of fires reads thousands):
// they must not be changed.
func (s JobStore) Definitions(ctx context.Context, ids []int64) (map[int64]*JobDefinition, error) {
	jobs, err := s.jobs.definitions(ids, func(ids []int64) (map[int64]*Job, error) {
		return collectJobs(s.q.jobsByID.QueryContext(ctx, jsonIDs(ids)))
	})
	if err != nil {
		return nil, fmt.Errorf("store: job definitions: %w", err)
	}
	return jobs, nil
}
