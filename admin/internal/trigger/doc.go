// Package trigger carries fires from "due" to "settled": it claims the
// runs of due fires, routes each to executors of its job's group, sends
// them (one RunBatch call per executor for the fires of one instant),
// records how each run was dispatched, and settles runs from their
// results, or, when no result will come, by its own judgement (Monitor,
// Reconcile).
//
// # The life of a fire
//
// A fire passes through the scheduler, then four stages here, the way
// river's jobs pass enqueuer, producer, executor and completer. Each stage
// is one file:
//
//  0. Scan (package schedule, scheduler.go; store/fire.go). The scheduler
//     reads the jobs due within its look-ahead and, in one transaction
//     per batch, advances each job's next fire and inserts its run as
//     RUNNING with triggered_at set to its instant (store.ClaimFires).
//     Misfires are recorded there too. The claimed fires wait in the
//     timer queue (schedule/queue.go) and are handed to Trigger.Fire a
//     little before their instant (schedule.Dispatcher).
//  1. Claim (claim.go). Fire takes the scan's claimed runs as they are,
//     and claims the pending runs that settling created (retries, child
//     jobs' runs: store.ClaimRuns, coalesced by coalesce.go). It starts
//     batches of up to batchMax runs in a bounded pool (pool.go): a job
//     that was slow lately goes to the slow pool, so a dead executor does
//     not hold up healthy ones.
//  2. Plan (plan.go). A batch reads its jobs, finds each group's executors
//     (cached per routing version) and routes each run with its job's
//     strategy (package route); a sharding broadcast gets one run per
//     executor, the extra shards inserted here. Runs that cannot be routed
//     fail with the reason.
//  3. Send (send.go). The routed runs are grouped into one call per
//     executor and their requests built, then the batch waits on the Clock
//     (clock.go) for its instant, drops the runs whose job was stopped or
//     deleted since the claim (settled SKIPPED), and makes the calls
//     (executor.go: the Connect clients, each carrying its group's
//     token). sendHeld is the path of scheduled fires; sendNow that of
//     TriggerJob (triggerjob.go), whose caller waits for the record.
//  4. Record (record.go, deferred.go). A scheduled run's successful
//     dispatch is held until its result comes, and stored by the result's
//     write (one row write fewer per run), or on its own after
//     recordDelay; a failed dispatch is recorded at once and settles the
//     run FAILED.
//  5. Settle (settle.go). Results from executors (server's ReportResults)
//     settle runs in one coalesced transaction (store.SettleRuns). What
//     follows each, retry with backoff, alarm, child jobs' runs, a
//     FIX_DELAY job's next fire, is decided by the pure policy in package
//     followup and written by the store in the same transaction; the new
//     pending runs go back to the scheduler through Queue, and start again
//     at stage 1.
//
// Runs whose result will not come are settled by Monitor (monitor.go: lost
// executors, timeouts, probes of MANUAL groups in manual.go, restarted
// executors in restart.go) and, after an admin restart, by Reconcile
// (reconcile.go, held.go), which asks executors which runs they hold.
package trigger
