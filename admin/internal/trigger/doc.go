// Package trigger carries fires from "due" to "settled": it claims the
// runs of due fires, routes each to an executor of its job's group, sends
// them (one RunBatch call per executor for the fires of one instant, or
// of the instants of 100 ms sent ahead together: GatherInstants),
// records how each run was dispatched, and settles runs from their
// results, or, when no result will come, by its own judgement.
//
// # Stages
//
// Four types, built together by New into a Trigger, the way river's jobs
// pass producer, executor, completer and rescuer:
//
//   - Dispatcher (dispatcher.go, instant.go, send.go, router.go): claims,
//     plans, routes and sends fires; TriggerJob's manual fires too.
//   - Completer (completer.go, records.go): stores dispatch records and
//     settles results, and hands on what follows a settled run.
//   - Rescuer (rescuer.go, monitor.go, reconcile.go, adopt.go, manual.go,
//     restart.go, held_watch.go, heartbeat.go): settles the runs whose
//     result will not come, and sends again the runs an earlier or dead
//     admin claimed and did not send.
//   - Gateway (gateway.go): every call to executors, each for a group
//     passed as an argument, with that group's protocol and token.
//
// # The life of a fire
//
// A fire has one shape on its way, fire (fire.go), and its executor's
// runs travel together in a call:
//
//  0. Scan (package schedule). The scheduler reads the jobs due within its
//     look-ahead and, in one transaction per batch, advances each job's
//     next fire and inserts its run as RUNNING, claimed by this admin,
//     with triggered_at set to its instant (store.FireStore.Claim); misfires
//     are recorded there too. The jobs of paused groups are not due; a
//     capped job's fire with no free slot is stored PENDING, waiting for
//     one (store caps.go). Workflow instants make their workflow run and
//     its roots' PENDING runs in the same scan. The claimed fires wait in
//     its timer queue and are handed to Dispatcher.Fire
//     (schedule.Dispatcher) a little before their instant.
//  1. Claim (dispatcher.go). Fire takes the scan's claimed runs as they
//     are, and claims the pending runs that settling or the API created
//     (retries, child jobs' and workflow nodes' runs, one-off runs at a
//     time, backfills: store.FireStore.ClaimRuns, in the first lane of the fire
//     path's writer, coalesce.go), except those of paused groups and
//     those of capped jobs with no free slot, which stay PENDING. Each
//     becomes a fire (fireOf). The fires
//     go in batches of up to batchMax into a bounded pool (pool.go): a job
//     that was slow lately goes to the slow pool, so a dead executor does
//     not hold up healthy ones.
//  2. Plan (instant.go, router.go). A batch reads its jobs and splits by
//     instant, instants less than GatherInstants apart together (the
//     scheduler hands them over together too: schedule.Config.FireGather).
//     For each instant the router finds each group's executors
//     (cached per routing version) and routes each fire with its job's
//     strategy (package route); a sharding broadcast gets one fire per
//     executor, the extra shards' runs inserted here. Fires that cannot be
//     routed fail with the reason. A job whose param is a template has it
//     rendered here, per run and shard (render.go), and recorded
//     (store.RunStore.RenderParams) before the send; other jobs' fires skip it.
//  3. Send (instant.go, send.go). The fires are grouped into one call per
//     executor. Fires to executors that take due_at are sent ahead of the
//     (earliest) instant, each due on its own, their routes recorded first
//     (store.RunStore.Route); the others, one call per executor and
//     instant, wait for their instant, drop the fires whose job was stopped or
//     deleted since the claim (settled SKIPPED), record their routes, and
//     are sent on it. Just before either call, a scheduled fire more than
//     the misfire threshold late (an overloaded admin) is dropped too,
//     settled SKIPPED as a misfire, and while the latest sends were more
//     than half the threshold late the scan sheds fires at the claim
//     (overdue.go). A scheduled fire waits for a dispatch slot, or for its
//     route to be written, no longer than the threshold after its instant
//     (slotWait, instant.resume, awaitRoutes): then it is dropped as such
//     a misfire at once. Each call goes through the Gateway.
//  4. Record (completer.go, records.go). A scheduled fire's successful
//     dispatch record is deferred until its result comes, and stored by
//     the result's write, or on its own after recordDelay (longer while
//     many are kept: a burst's results come as fast as they settle; up to
//     recordMax while results wait for the writer in thousands); a failed
//     dispatch is recorded at once and settles the run FAILED. A manual
//     fire's record is stored at once: TriggerJob waits for it.
//  5. Settle (completer.go). Results from executors (the server's
//     ReportResults) settle runs in one coalesced transaction
//     (store.RunStore.Settle). What follows each (retry with backoff, alarm,
//     child jobs' runs, a FIX_DELAY job's next fire) is decided by the pure
//     policy in package followup and written in the same transaction; the
//     new pending runs go back to the scheduler through Queue, and start
//     again at stage 1, with the runs that waited for the slots the
//     settled runs freed. A workflow node's outcome advances its workflow
//     run in the same transaction: its dependents' runs are made PENDING
//     there.
//
// Runs whose result will not come are the Rescuer's: Monitor settles
// those of lost executors, those past their timeout, those of restarted
// executors and of MANUAL groups' executors, and those their executor
// does not hold; Reconcile, after an admin restart or for dead admins it
// adopts, asks executors (HeldRuns) which of the unsent runs they hold.
// An earlier process's unsent runs are those RUNNING with no executor
// recorded when this process started, before it claimed anything
// (Config.Unsent): a pending run that process made is this one's to claim
// and send, never Reconcile's.
//
// # Words
//
// Each of these words means one thing in this package:
//
//   - fire: one firing of a job, due on one instant: the run it makes (or
//     one run per shard), on its way to its executor.
//   - instant: the time a fire is due, its run's triggered_at.
//   - claim: the write that makes a due run this admin's to send
//     (RUNNING, claimed_by): the scan's for scheduled fires, the
//     Dispatcher's for pending runs.
//   - route: the executor a fire goes to, recorded (runs.routed_to) before
//     its call, so that an admin taking over knows whom to ask.
//   - send-ahead: a call made before the instant to an executor that
//     starts the run on the instant by its own clock (due_at).
//   - dispatch: a run's sending to its executor; its dispatch record
//     (store.Dispatch) says where it went and how the call went.
//   - settle: the write of a run's final status, from its result or the
//     admin's judgement, with what follows it.
//   - held: what an executor says of a run it has accepted and not yet
//     had acknowledged (HeldRuns: waiting, running, ended, cut short).
//   - misfire: a fire not sent within the misfire threshold of its
//     instant; its job's misfire strategy decides what happens instead.
package trigger
