package trigger

import (
	"context"
	"slices"
	"time"

	carillonv1 "github.com/carillonhq/carillon/proto/carillon/v1"
)

// AdoptIntervalDefault is how often an admin sharing its database with
// others looks for admins whose lease ran out (store.AdoptDeadAdmins)
// while its lease's renewals see one (store.AdoptWork), and
// adoptCheckEvery how often it looks whatever they saw: a renewal reads
// the admins four times a lease, and a look of its own is a round trip
// and a wake-up, most of what an admin standing by costs.
const (
	AdoptIntervalDefault = 200 * time.Millisecond
	adoptCheckEvery      = 10 * time.Second
)

// adopt is Reconcile over a database that several admins share. It never
// returns before ctx ends: every AdoptIntervalDefault (or adoptCheckEvery,
// while the lease's renewals see no admin to adopt) it adopts the admins
// whose lease ran out (one that was killed, or lost the database) and
// settles the runs they claimed and did not record as sent, as Reconcile
// settles an earlier process's: a run an executor holds is recorded, one
// that no executor holds is sent at its instant (or goes through its
// misfire strategy when too late). An admin that restarts is a new admin
// to the others: its earlier process is adopted like any dead admin.
func (rs *Rescuer) adopt(ctx context.Context, cfg ReconcileConfig) error {
	r := &reconciler{rs: rs, cfg: cfg, done: map[int64]time.Time{}, unknownSince: map[int64]time.Time{},
		unsent: rs.cfg.Store.Runs.Adopted}
	var last time.Time // the last round that left runs waiting
	var adopted int
	seen := map[string]bool{} // the admins adopted so far
	var checked time.Time     // the last call of AdoptDeadAdmins
	for {
		if now := rs.cfg.Clock.Now(); !rs.cfg.Store.AdoptWorkSeen() && now.Sub(checked) < adoptCheckEvery {
			// Until a renewal sees work, or the check is due.
			if !sleepOr(ctx, rs.cfg.Clock, adoptCheckEvery-now.Sub(checked), rs.cfg.Store.AdoptWork()) && ctx.Err() != nil {
				return nil
			}
			continue
		}
		checked = rs.cfg.Clock.Now()
		ids, err := rs.cfg.Store.AdoptDeadAdmins(ctx)
		switch {
		case err != nil:
			if ctx.Err() == nil {
				rs.cfg.Logger.Error("trigger: adopt the admins whose lease ran out", "err", err)
			}
		case len(ids) > 0 && (len(ids) != adopted || last.IsZero() || rs.cfg.Clock.Now().Sub(last) >= cfg.Interval):
			if fresh := slices.DeleteFunc(slices.Clone(ids), func(id string) bool { return seen[id] }); len(fresh) > 0 {
				rs.cfg.Logger.Warn("trigger: adopted admins whose lease ran out; settling the runs they claimed", "admins", fresh)
				for _, id := range fresh {
					seen[id] = true
				}
				rs.queuePending(ctx)
			}
			left, err := r.round(ctx)
			if err != nil && ctx.Err() == nil {
				rs.cfg.Logger.Error("trigger: settle the runs of adopted admins", "err", err)
			}
			last = time.Time{}
			if left > 0 || err != nil {
				last = rs.cfg.Clock.Now()
			}
		}
		adopted = len(ids)
		if !sleep(ctx, rs.cfg.Clock, AdoptIntervalDefault) {
			return nil
		}
	}
}

// later returns the later of a and b.
func later(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

// queuePending queues the pending runs in the database (retries, child
// jobs' and workflow nodes' runs, one-off runs at a time): those of an
// admin that died waited in its memory only, and would otherwise wait
// until an admin restarts. The runs still queued by the admins that live
// are queued here too; each is claimed once (store.FireStore.ClaimRuns), by
// whichever admin comes first.
func (rs *Rescuer) queuePending(ctx context.Context) {
	pending, err := rs.cfg.Store.Runs.Pending(ctx)
	if err != nil {
		rs.cfg.Logger.Error("trigger: read the pending runs of adopted admins; they wait for an admin's restart", "err", err)
		return
	}
	runs := pending[:0]
	for _, r := range pending {
		if r.TriggerType != carillonv1.TriggerType_TRIGGER_TYPE_SCHEDULE { // read ahead by admins before 0.x: restarts judge them
			runs = append(runs, r)
		}
	}
	if len(runs) > 0 {
		rs.cfg.Queue.Enqueue(runs...)
	}
}
