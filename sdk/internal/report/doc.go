// Package report delivers the executor's run results to the admin: a run's
// [Result] is written to the [Spool] on disk when the run ends, then sent
// in batches by the [Reporter], retried with backoff while no admin takes
// it, and acknowledged in the spool once an admin did, so that no result
// is lost to an admin outage or an executor restart.
//
// The spool's on-disk format (one JSON line per result or acknowledgement)
// is described on [Spool].
package report
