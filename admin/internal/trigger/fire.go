package trigger

import (
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/otel/trace"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/carillonhq/carillon/admin/internal/schedule"
	"github.com/carillonhq/carillon/admin/internal/store"
	carillonv1 "github.com/carillonhq/carillon/proto/carillon/v1"
)

// fire is one run on its way from its claim to its executor: the one
// shape a run has in the Dispatcher, from the claim (fireOf) through the
// plan (routed: job, address, note) to its call. It keeps what the run's
// request, route and dispatch record read, about a third of a store.Run:
// the whole run (run) is let go once the fire is planned, since a burst
// holds its fires until its instant.
type fire struct {
	id, jobID              int64
	shardIndex, shardTotal int32
	scheduledAt            time.Time
	triggeredAt            time.Time // the instant its claim stored
	triggerType            carillonv1.TriggerType
	attempt                int32  // in the padding after triggerType: it takes no room
	param                  string // the request takes its handler from the job
	// inputs are a workflow node's run's (store.Run.Inputs): nil for
	// every other run.
	inputs map[string]string

	// run is the claimed run, until the fire is planned: a broadcast's
	// extra shards are copied from it (runCopy). nil afterwards, and from
	// the start for a plain fire the scan claimed (schedule.Plain).
	run *store.Run
	// at is the instant the fire is sent on (zero: now, a manual run).
	at time.Time
	// stopSeq is the store's stop sequence (store.JobStore.StopSeq) read before
	// the claim: a job stopped after it has its fire skipped.
	stopSeq uint64
	// fixed, if not nil, confines the fire to executors other than its
	// group's choice: rare (TriggerJob's addresses, a resend after an
	// admin's death), so kept out of line.
	fixed *fixedRoute

	// Set by the plan:
	job     *store.JobDefinition // shared along the path, never copied; nil if the job was deleted, and once sent ahead (waiting)
	group   int64                // job.GroupID, kept while a fire sent ahead waits for its instant without its job (waiting)
	address string               // the executor it is routed to
	note    routeNote            // how it was routed, for its trigger message
	dueAt   bool                 // the executor starts runs at their RunRequest.due_at: it may be sent ahead
	// rendered says param is rendered from its job's template (render.go),
	// by the plan or before (a run sent again); beside dueAt, in padding.
	rendered bool
	// waits says the fire counts in the dispatcher's backlog: handed
	// over, not reached yet for its call (backlog.go); in padding too.
	waits bool
	span  trace.Span // from its call's preparation to its dispatch; nil when not tracing
}

// waiting drops f's job definition, keeping its group: f was sent ahead
// and waits for its instant, when only its executor, run and group are
// read (a stop or update cancels or replaces it; resend reads the job
// again). A million fires sent ahead of a minute mark would keep a
// million definitions otherwise (177 MB), which the job cache, bounded
// (jobCacheMax), has let go. A fire re-routed is in two calls: the
// second call to waiting leaves it as it is.
func (f *fire) waiting() {
	if f.job != nil {
		f.group, f.job = f.job.GroupID, nil
	}
}

// fixedRoute is where a fire goes instead of where its job's strategy
// would send it.
type fixedRoute struct {
	// pin, if not "", is the executor the fire goes to, whatever its
	// job's strategy: one an earlier admin routed it to, which does not
	// hold it. It is sent again there only, where the executor's run ID
	// check keeps a late call of that admin from running it twice.
	pin string
	// override, if not nil, are the executors to route among instead of
	// the group's (TriggerJob's addresses).
	override []string
}

// fireOf returns the fire of claimed run r, sent on instant at.
func fireOf(r *store.Run, at time.Time, stopSeq uint64) fire {
	f := fire{at: at, stopSeq: stopSeq}
	f.setRun(r)
	return f
}

// setRun makes f the fire of run r.
func (f *fire) setRun(r *store.Run) {
	f.id, f.jobID, f.shardIndex, f.shardTotal = r.ID, r.JobID, r.ShardIndex, r.ShardTotal
	f.scheduledAt, f.triggeredAt, f.triggerType, f.param = r.ScheduledAt, r.TriggeredAt, r.TriggerType, r.SentParam()
	f.attempt, f.inputs, f.rendered = r.Attempt, r.Inputs, r.RenderedParam != nil
	f.run = r
}

// firesOf returns the fires of the scan's claimed runs es (each
// Entry.Claimed).
func firesOf(es []schedule.Entry) []fire {
	fs := make([]fire, len(es))
	for i, e := range es {
		if e.Run != nil {
			fs[i] = fireOf(e.Run, e.At, e.StopSeq)
			continue
		}
		// A plain fire of its job (schedule.Plain): its entry keeps only
		// what differs from one fire to the next.
		fs[i] = fire{id: e.RunID, jobID: e.JobID, shardTotal: 1, scheduledAt: e.ScheduledAt, triggeredAt: e.At,
			triggerType: e.TriggerType, param: e.Param, at: e.At, stopSeq: e.StopSeq}
	}
	return fs
}

// runCopy returns a copy of f's claimed run, for another shard of its
// broadcast: its run, or, for a plain fire the scan claimed (fire.run
// nil, schedule.Plain), that run rebuilt from f and its job.
func (f *fire) runCopy() store.Run {
	if f.run != nil {
		return *f.run
	}
	return store.Run{
		ID: f.id, JobID: f.jobID, GroupID: f.job.GroupID, Handler: f.job.Handler, Param: f.param,
		ShardIndex: f.shardIndex, ShardTotal: f.shardTotal, TriggerType: f.triggerType, ScheduledAt: f.scheduledAt,
		TriggeredAt: f.triggeredAt, Status: carillonv1.RunStatus_RUN_STATUS_RUNNING, Attempt: f.attempt,
	}
}

// request is the request that sends f, whose job is job (f's own or one
// read since), from the database with ID db and the admin with ID admin
// (store.AdminID). The job's fields it takes
// are those whose update replaces the runs sent ahead of their instant
// (the store's runsChanged, and PostgreSQL's job_changes trigger): keep
// them in step.
func (f *fire) request(job *store.JobDefinition, db, admin string) *carillonv1.RunRequest {
	req := &carillonv1.RunRequest{
		RunId: f.id, JobId: job.ID, Handler: job.Handler, Param: f.param, BlockStrategy: job.BlockStrategy,
		TimeoutSeconds: job.TimeoutSeconds, ShardIndex: f.shardIndex, ShardTotal: f.shardTotal,
		ScheduledAt: timestamppb.New(f.scheduledAt), DatabaseId: db, Attempt: f.attempt, Inputs: f.inputs,
		AdminId: admin,
	}
	if job.ScriptType != carillonv1.ScriptType_SCRIPT_TYPE_UNSPECIFIED {
		req.Script = &carillonv1.Script{Type: job.ScriptType, Source: job.ScriptSource, UpdatedAt: timestamppb.New(job.ScriptUpdatedAt)}
	}
	return req
}

// failed is the dispatch record of a fire that could not be sent.
func (f *fire) failed(msg string, now time.Time) store.Dispatch {
	return store.Dispatch{
		RunID: f.id, ShardIndex: f.shardIndex, ShardTotal: f.shardTotal, TriggerMessage: "not dispatched",
		Failed: true, Message: msg, FinishedAt: now,
	}
}

// call is the fires of one call to one executor (Run for one run, RunBatch
// for more, or one Run per run to an executor that does not serve
// RunBatch), ready to send: requests built and dispatch records written.
type call struct {
	address string
	dueAt   time.Time // the earliest instant of its fires, for a call sent ahead; zero: sent on it
	group   int64     // the group of every fire of the call, whose token it carries
	db      string    // the database ID every request carries
	admin   string    // the admin ID every request carries (store.AdminID)
	fires   []*fire
	reqs    []*carillonv1.RunRequest
	ds      []store.Dispatch // how each run was dispatched, as recorded if the call succeeds, without its trigger message (message)
	note    *callNote
}

// routeNote is how a fire was routed, for its trigger message: the
// strategy and the executors it chose among (head: route.Pick.Head, one
// string shared by the fires routed over the same executors, unless a
// source other than the group's registrations begins it), then what was
// chosen (tail: the fire's own). A burst's million waiting fires held a
// million copies of the shared part.
type routeNote struct{ head, tail string }

// callNote is what the trigger messages of a call's runs say of the call:
// how many runs it carried and, once it returned, how it went.
type callNote struct {
	runs int
	took atomic.Pointer[string]
}

// message returns the trigger message of d, a run of the call routed as
// route says: the route (which names the executor it chose), then the
// call; a shard of a broadcast names its shard and executor, which its
// route lists among the others. What the run's record holds in columns of
// its own (its executor, a lone shard) is not said again: a burst stores
// the message once per run.
func (n *callNote) message(route routeNote, d *store.Dispatch) string {
	var took, failed string
	if p := n.took.Load(); p != nil {
		took = *p
	}
	if d.Failed {
		failed = "; failed"
	}
	// Appended, not formatted: a burst's million records each have one
	// (fmt.Sprintf was 50 MB of a million-run mark's live heap, boxing
	// each number), in one allocation.
	var b strings.Builder
	var num [20]byte
	b.Grow(len(route.head) + len(route.tail) + len(d.ExecutorAddress) + len(took) + len(failed) + 80)
	b.WriteString(route.head)
	b.WriteString(route.tail)
	if d.ShardTotal > 1 {
		b.WriteString("; shard ")
		b.Write(strconv.AppendInt(num[:0], int64(d.ShardIndex), 10))
		b.WriteString(" of ")
		b.Write(strconv.AppendInt(num[:0], int64(d.ShardTotal), 10))
		b.WriteString(" (0-based) sent to ")
		b.WriteString(d.ExecutorAddress)
		b.WriteString(" in a call of ")
	} else {
		b.WriteString("; a call of ")
	}
	b.Write(strconv.AppendInt(num[:0], int64(n.runs), 10))
	b.WriteString(" runs")
	b.WriteString(took)
	b.WriteString(failed)
	return b.String()
}

// message returns the whole trigger message of c's i-th run.
func (c *call) message(i int) string { return c.note.message(c.fires[i].note, &c.ds[i]) }

// lastDue is the latest instant of c's fires, for a call sent ahead;
// zero for one made on its instant.
func (c *call) lastDue() time.Time {
	if c.dueAt.IsZero() {
		return time.Time{}
	}
	return latest(c.fires, c.dueAt)
}

// latest is the latest instant of fires, or from if it is later.
func latest(fires []*fire, from time.Time) time.Time {
	for _, f := range fires {
		if f.at.After(from) {
			from = f.at
		}
	}
	return from
}

// deferredRecords returns c's dispatch records to keep until their results
// come, their trigger messages in parts.
func (c *call) deferredRecords() []deferredRecord {
	rs := make([]deferredRecord, len(c.ds))
	for i := range c.ds {
		rs[i] = keptRecord(c.ds[i], c.fires[i].note, c.note)
	}
	return rs
}

// prepare builds c's requests and dispatch records from its fires, unless
// it did already.
func (c *call) prepare() {
	if c.reqs != nil {
		return
	}
	c.reqs = make([]*carillonv1.RunRequest, len(c.fires))
	c.ds = make([]store.Dispatch, len(c.fires))
	c.note = &callNote{runs: len(c.fires)}
	for i, f := range c.fires {
		c.reqs[i] = f.request(f.job, c.db, c.admin)
		c.reqs[i].TraceContext = f.traceCarrier()
		if !c.dueAt.IsZero() {
			c.reqs[i].DueAt = timestamppb.New(f.at)
		}
		c.ds[i] = store.Dispatch{RunID: f.id, ExecutorAddress: c.address, ShardIndex: f.shardIndex, ShardTotal: f.shardTotal,
			TimeoutSeconds: f.job.TimeoutSeconds}
	}
}

// without returns c without the fires for which drop is true, to be
// prepared again when it is made.
func (c *call) without(drop func(*fire) bool) *call {
	kept := slices.DeleteFunc(slices.Clone(c.fires), drop)
	if len(kept) == len(c.fires) {
		return c
	}
	return &call{address: c.address, dueAt: c.dueAt, group: c.group, db: c.db, admin: c.admin, fires: kept}
}

// splitAhead splits calls into those to make on the instant and those to
// make ahead of it (their dueAt set by Dispatcher.calls).
func splitAhead(calls []*call) (onInstant, ahead []*call) {
	for _, c := range calls {
		if c.dueAt.IsZero() {
			onInstant = append(onInstant, c)
		} else {
			ahead = append(ahead, c)
		}
	}
	return onInstant, ahead
}
