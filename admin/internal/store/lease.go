package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/carillonhq/carillon/admin/internal/service"
)

// LeaseDuration is how long an admin sharing a PostgreSQL database stays
// alive to the others without renewing its lease (every quarter of it).
// Once it has run out, another admin adopts the runs it claimed and did not
// send (AdoptDeadAdmins), and the admin itself, if it still runs, stops
// (LeaseLost): no two admins ever send the same claimed run. A renewal
// merely late, before any admin adopted it, still renews it: a machine
// that stalled every admin for a moment does not stop them all. It bounds
// how late fires are after an admin dies.
const LeaseDuration = time.Second

// lease is what this admin knows of its own lease.
type lease struct {
	mu sync.Mutex
	// validUntil is, on this admin's clock, when the lease runs out at the
	// earliest: the last renewal's start plus LeaseDuration.
	validUntil time.Time
	lost       bool
	lostCh     chan struct{}
	// renewed is closed, and replaced, at each renewal (AwaitLease).
	renewed chan struct{}
	// duration is LeaseDuration unless SetLeaseDuration changed it; set
	// before the lease's first renewal, and read without mu after.
	duration time.Duration
}

// period is how long the lease holds after a renewal.
func (l *lease) period() time.Duration {
	if l.duration == 0 {
		return LeaseDuration
	}
	return l.duration
}

// SetLeaseDuration makes this admin's lease hold d after each renewal
// instead of LeaseDuration (renewed every quarter of it): the admin's
// --lease-duration, longer on a machine so busy that renewals come a
// second late, and tests that run an admin over PostgreSQL on a fake
// clock (testing/synctest), where the admin's clock stands still while
// it waits for the database, whose clock does not. Call it before
// LeaseLoop starts. Over SQLite it does nothing.
func (s *Store) SetLeaseDuration(d time.Duration) {
	if s.pg != nil {
		s.pg.lease.duration = d
	}
}

// renewLease extends this admin's lease by LeaseDuration from now on the
// database's clock, and notes on the admin's clock, from before it asked,
// until when it holds. A lease that another admin adopted is never
// renewed: the admin is lost (LeaseLost). One that ran out and that no
// admin adopted yet is renewed: the admin was late (a stalled machine or
// database), and what it claimed is still its own; its fenced writes
// meanwhile failed, and one that failed lost the lease (holdLease).
//
// The renewal and an adoption exclude each other on the admin's row: an
// adopter locks it (FOR UPDATE SKIP LOCKED) and the renewal, an UPDATE,
// waits for it and then finds it adopted; a renewal under way makes an
// adopter skip the row, and then see the lease held.
func (s *db) renewLease(ctx context.Context) error {
	l := &s.pg.lease
	l.mu.Lock()
	if l.lostCh == nil {
		l.lostCh = make(chan struct{})
	}
	if l.lost {
		// Renewed now, it would keep its adopter waiting for a lease.
		l.mu.Unlock()
		return fmt.Errorf("store: the lease of admin %s was lost", s.pg.adminID)
	}
	first := l.validUntil.IsZero()
	l.mu.Unlock()
	asked := time.Now()
	ms := l.period().Milliseconds()
	var renewed bool
	var admins []adminRow
	var err error
	if first {
		var res sql.Result
		res, err = s.w.ExecContext(ctx, `INSERT INTO admins (id, started_at, lease_until) VALUES ($1, `+pgNow+`, `+pgNow+` + $2)`, s.pg.adminID, ms)
		if err == nil {
			var n int64
			n, err = res.RowsAffected()
			renewed = n == 1
		}
	} else {
		rate, sharing := s.published()
		admins, renewed, err = s.renewAndRead(ctx, ms, rate, sharing)
	}
	adopted := false
	if err == nil && !renewed {
		adopted = true // or adopted and forgotten: the row is gone
		err = fmt.Errorf("store: admin %s was adopted by another admin after its lease ran out", s.pg.adminID)
	}
	if err == nil && !first {
		s.sharePartition(admins)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	switch {
	case l.lost:
	case err == nil:
		l.validUntil = asked.Add(l.period())
		if l.renewed != nil {
			close(l.renewed)
			l.renewed = nil
		}
	case adopted, !first && time.Now().After(l.validUntil):
		// Unreachable past the lease, an admin may have been adopted.
		l.lose()
	}
	return err
}

// adminColumns are what an admin reads of every admin (adminRow).
const adminColumns = `id, adopted_by, fires_per_s, sharing, lease_until >= ` + pgNow

// renewLeaseSQL renews this admin's lease ($1), publishing its fires
// claimed a second and how many admins it counts as sharing them
// (partition.go), and reads every admin as readAdmins does, with whether
// the renewal applied: one round trip for both. The read sees the table
// as it was before the renewal.
const renewLeaseSQL = `WITH renewed AS (UPDATE admins SET lease_until = ` + pgNow + ` + $2, fires_per_s = $3, sharing = $4
		WHERE id = $1 AND adopted_by = '' RETURNING id)
	SELECT ` + adminColumns + `, EXISTS (SELECT 1 FROM renewed) FROM admins ORDER BY id`

// adminRow is what an admin reads of an admin (adminColumns).
type adminRow struct {
	id, adoptedBy string
	rate          int64
	sharing       int
	alive         bool // its lease holds
}

// scanAdmins reads rows of adminColumns, and into renewed, unless nil,
// the column after them.
func scanAdmins(rows *sql.Rows, renewed *bool) ([]adminRow, error) {
	defer rows.Close()
	var admins []adminRow
	for rows.Next() {
		var r adminRow
		dest := []any{&r.id, &r.adoptedBy, &r.rate, &r.sharing, &r.alive}
		if renewed != nil {
			dest = append(dest, renewed)
		}
		if err := rows.Scan(dest...); err != nil {
			return nil, err
		}
		admins = append(admins, r)
	}
	return admins, rows.Err()
}

// readAdmins reads every admin.
func (s *db) readAdmins(ctx context.Context) ([]adminRow, error) {
	rows, err := s.r.QueryContext(ctx, `SELECT `+adminColumns+` FROM admins ORDER BY id`)
	if err != nil {
		return nil, err
	}
	return scanAdmins(rows, nil)
}

// renewAndRead runs renewLeaseSQL: it returns the admins as they were,
// this one alive if renewed, and whether the renewal applied.
func (s *db) renewAndRead(ctx context.Context, ms, rate int64, sharing int) (admins []adminRow, renewed bool, err error) {
	rows, err := s.w.QueryContext(ctx, renewLeaseSQL, s.pg.adminID, ms, rate, sharing)
	if err != nil {
		return nil, false, err
	}
	if admins, err = scanAdmins(rows, &renewed); err != nil {
		return nil, false, err
	}
	for i := range admins {
		if admins[i].id == s.pg.adminID {
			admins[i].alive = admins[i].alive || renewed // a late renewal that applied
		}
	}
	return admins, renewed, nil
}

// adoptWork reports whether AdoptDeadAdmins has anything to do among the
// admins read: an admin this one (self) adopted, or one whose lease ran
// out that no live admin adopted.
func adoptWork(admins []adminRow, self string) bool {
	alive := make(map[string]bool, len(admins))
	for _, a := range admins {
		alive[a.id] = a.alive
	}
	for _, a := range admins {
		if a.adoptedBy == self || (a.id != self && !a.alive && (a.adoptedBy == "" || !alive[a.adoptedBy])) {
			return true
		}
	}
	return false
}

// lose marks the lease lost, with l.mu held: the admin stops.
func (l *lease) lose() {
	if l.lost {
		return
	}
	l.lost = true
	if l.lostCh == nil {
		l.lostCh = make(chan struct{})
	}
	close(l.lostCh)
}

// LeaseLoop returns the service that renews this admin's lease at once and
// every quarter of LeaseDuration (Open took it): an admin sharing a PostgreSQL
// database runs it while it serves, and until its claimed runs are sent
// and recorded. Over SQLite it ends at once.
func (s *Store) LeaseLoop() service.Service {
	return service.NewLoop(func(stop context.Context) error {
		if s.pg == nil {
			return nil
		}
		period := s.pg.lease.period()
		renew := func(ctx context.Context) {
			_ = s.renewLease(ctx) // a failure shows in LeaseLost once the lease runs out
		}
		// At once too: SetLeaseDuration may have changed the period
		// since Open's renewal.
		ctx, cancel := context.WithTimeout(stop, period)
		renew(ctx)
		cancel()
		return every(stop, period/4, period, renew)
	})
}

// LeaseLost returns a channel closed once this admin's lease ran out
// without renewal (the database was unreachable, or the process stalled
// for longer than LeaseDuration): other admins may have adopted its runs,
// and it must stop scheduling. Nil over SQLite: a SQLite admin holds the
// file's lock until it closes.
func (s *Store) LeaseLost() <-chan struct{} {
	if s.pg == nil {
		return nil
	}
	l := &s.pg.lease
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.lostCh
}

// Leased reports whether this admin may send the runs it claimed: over
// SQLite always; over PostgreSQL while its lease holds on its own clock.
func (s *Store) Leased() bool {
	if s.pg == nil {
		return true
	}
	l := &s.pg.lease
	l.mu.Lock()
	defer l.mu.Unlock()
	return !l.lost && time.Now().Before(l.validUntil)
}

// AwaitLease reports whether this admin may send the runs it claimed, as
// Leased does, but where its lease ran out on its own clock without being
// lost (a renewal late on a busy machine or database), it waits up to
// LeaseDuration, or until ctx ends, for the next renewal: a renewal
// succeeds only while no other admin adopted this one, so the runs are
// still its own. It returns false once the lease is lost.
func (s *Store) AwaitLease(ctx context.Context) bool { return s.awaitLease(ctx) }

// awaitLease is Store.AwaitLease.
func (s *db) awaitLease(ctx context.Context) bool {
	if s.pg == nil {
		return true
	}
	l := &s.pg.lease
	timer := time.NewTimer(l.period())
	defer timer.Stop()
	for {
		l.mu.Lock()
		if !l.lost && time.Now().Before(l.validUntil) {
			l.mu.Unlock()
			return true
		}
		if l.lost || l.lostCh == nil {
			l.mu.Unlock()
			return false
		}
		if l.renewed == nil {
			l.renewed = make(chan struct{})
		}
		renewed, lost := l.renewed, l.lostCh
		l.mu.Unlock()
		select {
		case <-renewed:
		case <-lost:
			return false
		case <-ctx.Done():
			return false
		case <-timer.C:
			return false
		}
	}
}

// AdoptDeadAdmins makes this admin the adopter of every admin whose lease
// ran out and that no live admin adopted yet, and returns the ids of all
// the admins it has adopted: their unsent runs (RunStore.Adopted) are its to
// settle. An adopted admin with no unsent run left is forgotten. Over
// SQLite it returns nothing.
//
// It is called five times a second: while no admin is dead or adopted, it
// makes one read (readAdmins), not a write transaction. It adopts inside
// the admins' fence (writeLeased): an admin adopts only while its own
// lease holds, so that two admins stalled together and waking together
// cannot adopt each other (each holds its own row, which the other's
// FOR UPDATE SKIP LOCKED then skips), and an admin late to renew renews
// before it adopts anyone.
func (s *Store) AdoptDeadAdmins(ctx context.Context) ([]string, error) {
	if s.pg == nil {
		return nil, nil
	}
	admins, err := s.readAdmins(ctx)
	if err != nil {
		return nil, fmt.Errorf("store: adopt dead admins: %w", err)
	}
	if !adoptWork(admins, s.pg.adminID) {
		return nil, nil
	}
	var ids []string
	err = s.writeLeased(ctx, func(tx *sql.Tx) error {
		ids = ids[:0]
		if _, err := tx.ExecContext(ctx, `DELETE FROM admins a WHERE a.adopted_by = $1
			AND NOT EXISTS (SELECT 1 FROM runs WHERE runs.claimed_by = a.id AND runs.status = `+sqlRunning+` AND runs.executor_address = '')`,
			s.pg.adminID); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `WITH dead AS (SELECT id FROM admins WHERE id != $1 AND lease_until < `+pgNow+`
				AND (adopted_by = '' OR adopted_by NOT IN (SELECT id FROM admins WHERE lease_until >= `+pgNow+`))
				ORDER BY id FOR UPDATE SKIP LOCKED)
			UPDATE admins SET adopted_by = $1 FROM dead WHERE admins.id = dead.id`, s.pg.adminID); err != nil {
			return err
		}
		rows, err := tx.QueryContext(ctx, `SELECT id FROM admins WHERE adopted_by = $1 ORDER BY id`, s.pg.adminID)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var id string
			if err := rows.Scan(&id); err != nil {
				return err
			}
			ids = append(ids, id)
		}
		return rows.Err()
	})
	if err != nil {
		return nil, fmt.Errorf("store: adopt dead admins: %w", err)
	}
	return ids, nil
}

// adoptedRunsSQL reads the runs that the admins this one adopted claimed
// and did not record as sent.
const adoptedRunsSQL = `SELECT ` + runColumns + `, routed_to FROM runs WHERE status = ` + sqlRunning + ` AND executor_address = ''
	AND claimed_by IN (SELECT id FROM admins WHERE adopted_by = $1) ORDER BY id`

// Adopted returns the running runs that the admins this one adopted
// (AdoptDeadAdmins) claimed and did not record as sent: they may or may
// not have sent them before they died; if they did, to the executor each
// was routed to (Run.RoutedTo).
func (s RunStore) Adopted(ctx context.Context) ([]Run, error) {
	if s.pg == nil {
		return nil, nil
	}
	return s.queryRouted(ctx, adoptedRunsSQL, s.pg.adminID)
}

// pgHoldLeaseSQL is the admins' fence: it finds this admin's row only
// while its lease holds on the database's clock and no other admin
// adopted it, and holds the row (FOR KEY SHARE) until the transaction
// ends, so that an admin adopting this one (AdoptDeadAdmins, FOR UPDATE
// SKIP LOCKED) does so after the transaction, and sees all it wrote. KEY
// SHARE, not SHARE: the lease's own renewal (an UPDATE of lease_until)
// must not wait for a long claim, or the claim would outlast the lease.
const pgHoldLeaseSQL = `SELECT 1 FROM admins WHERE id = ` + pgAdmin + ` AND adopted_by = '' AND lease_until >= ` + pgNow + ` FOR KEY SHARE`

// holdLease is the admins' fence of a write transaction over PostgreSQL:
// it returns ErrLeaseLost unless this admin's lease holds and no other
// admin adopted it, and then no admin adopts it before tx ends. Over
// SQLite, whose one admin holds the file, it does nothing.
//
// A fenced write that found the lease run out loses it for good, even if
// a late renewal would still succeed: its caller leaves what it claimed to
// the admin that adopts this one (ErrLeaseLost), so this one must stop
// and be adopted.
func (s *db) holdLease(ctx context.Context, tx *sql.Tx) error {
	if s.pg == nil {
		return nil
	}
	var one int
	err := tx.QueryRowContext(ctx, pgHoldLeaseSQL).Scan(&one)
	if errors.Is(err, sql.ErrNoRows) {
		s.loseLease()
		return ErrLeaseLost
	}
	return err
}

// loseLease marks this admin's lease lost, for good: a fenced write found
// it run out or adopted.
func (s *db) loseLease() {
	l := &s.pg.lease
	l.mu.Lock()
	defer l.mu.Unlock()
	l.lose()
}

// writeLeased is write inside the admins' fence (holdLease): over
// PostgreSQL it changes nothing and returns ErrLeaseLost once this admin's
// lease ran out or another admin adopted it; a renewal merely late is
// waited for (AwaitLease). Every transaction that claims runs for this
// admin to send (claimed_by), or makes runs that wait in its queue, goes
// through it: an adopter takes over an admin only between its
// transactions, so that a claim committed by an admin frozen in the middle
// of it is never left to an admin that was adopted, and forgotten,
// meanwhile.
func (s *db) writeLeased(ctx context.Context, fn func(tx *sql.Tx) error) error {
	if !s.awaitLease(ctx) {
		return ErrLeaseLost
	}
	return s.write(ctx, func(tx *sql.Tx) error {
		if err := s.holdLease(ctx, tx); err != nil {
			return err
		}
		return fn(tx)
	})
}
