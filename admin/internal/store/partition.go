package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/carillonhq/carillon/admin/internal/service"
)

// Admins sharing a PostgreSQL database share the due jobs and workflows:
// each scans and claims its own, and another admin's only once they are
// late to be claimed. A job or workflow falls in bucket BucketOf(id); the
// live admins (their leases hold, none adopted), sorted by id, split the
// buckets into ranges (partitionOf). Every admin reads the admins again
// with each renewal of its lease (renewLeaseSQL, four times a lease), so
// an admin that died (its lease ran out) or joined moves the ranges
// within that interval.
//
// The ranges need no agreement: while two admins disagree on them for a
// moment, a job is claimed by two admins (the claim's advance applies
// once, the other's attempt changes nothing) or by none until the scans
// claim the other admins' jobs due within the look-ahead less
// TakeoverDelay. A scan claims fires a look-ahead before their instant,
// so a job its owner did not claim TakeoverDelay after it should have is
// still claimed before its instant (with the defaults, 500 ms before):
// the jobs of an admin that died, or is behind, fire on.
//
// Over SQLite, whose one admin holds the file, and over PostgreSQL while
// an admin is alone, it owns every bucket and its scan reads as before.
//
// The admins share the fires only as far as their load needs
// (SetFiresPerAdmin): each publishes with its lease how many fires a
// second it claimed and how many admins it counts as sharing them, and
// the first admins, in id order, enough that each takes at most the
// figure, share the buckets; the others own none and stand by (they
// serve the API, and take over what an owner leaves late). Every admin
// pays for its loops and for each batch it claims, sends and settles,
// whatever its size: three admins sharing a load one admin holds spent
// about twice its CPU.

// Buckets is how many buckets the admins share: an index of the scan
// (jobs_due, workflows_due) holds each row's bucket, so that an admin's
// scan reads its own buckets' entries only.
const Buckets = 1024

// TakeoverDelay is how long after its owner should have claimed it
// (a look-ahead before its instant) an admin claims another admin's due
// job or workflow. Shorter than the look-ahead (schedule.LookaheadDefault,
// 1.5 s), so that it still fires on time; long enough that a live owner,
// scanning whenever its next fire comes within its look-ahead, has
// claimed it well before.
const TakeoverDelay = time.Second

// Partition is the range of buckets an admin owns, [Lo, Hi).
type Partition struct {
	Lo, Hi int
}

// bucketStride scatters consecutive ids over the buckets: BucketOf(id) is
// id·bucketStride mod Buckets, a one-to-one map of each Buckets ids (the
// stride is odd) that puts neighbours about Buckets/φ apart. With id mod
// Buckets, the first few hundred jobs of a cluster, ids in order, all
// fell in the first admin's range, and the other admins scheduled none of
// them.
const bucketStride = 633

// BucketOf returns the bucket of the job or workflow id (id > 0), as the
// scan's indexes hold it (bucketSQL).
func BucketOf(id int64) int { return int(id * bucketStride % Buckets) }

// all is the partition of an admin alone: every bucket.
var all = Partition{0, Buckets}

// All reports whether p is every bucket: the admin is alone.
func (p Partition) All() bool { return p.Lo <= 0 && p.Hi >= Buckets }

// Owns reports whether the job or workflow id falls in p.
func (p Partition) Owns(id int64) bool {
	b := BucketOf(id)
	return b >= p.Lo && b < p.Hi
}

// none is the partition of an admin standing by: no bucket.
var none = Partition{Buckets, Buckets}

// String is p's range, for logs.
func (p Partition) String() string {
	if p.Lo >= p.Hi {
		return "no buckets"
	}
	return "buckets " + strconv.Itoa(p.Lo) + "-" + strconv.Itoa(p.Hi-1) + " of " + strconv.Itoa(Buckets)
}

// partitionOf returns the buckets that admin self owns among the live
// admins live when the first sharing of them share the fires: the one
// of rank r < sharing in id order owns [r·Buckets/k, (r+1)·Buckets/k),
// k = min(sharing, n), the others none (sharing < 1 counts as every live
// admin). An admin not among them (its own lease not seen yet) owns
// every bucket: claiming too much costs attempts that change nothing,
// claiming nothing could leave jobs unclaimed.
func partitionOf(live []string, self string, sharing int) Partition {
	live = slices.Clone(live)
	slices.Sort(live)
	live = slices.Compact(live)
	r, found := slices.BinarySearch(live, self)
	if !found {
		return all
	}
	k := len(live)
	if sharing > 0 {
		k = min(k, sharing)
	}
	if r >= k {
		return none
	}
	return Partition{r * Buckets / k, (r + 1) * Buckets / k}
}

// sharingOf returns how many of n live admins share fires coming at total
// a second when current of them share them now (the most any live admin
// published; 0 before any did): enough that each takes at most perAdmin
// a second, at least one and at most n. It grows as soon as the load
// needs it, and shrinks only to as many as would take three quarters of
// perAdmin each, so that a load near a multiple of perAdmin does not
// move the buckets back and forth. perAdmin 0: every live admin.
func sharingOf(total int64, current, n int, perAdmin int64) int {
	if perAdmin <= 0 {
		return n
	}
	k := max(current, 1)
	need := int((max(total, 0) + perAdmin - 1) / perAdmin)
	if low := int((4*max(total, 0) + 3*perAdmin - 1) / (3 * perAdmin)); need > k {
		k = need
	} else if low < k {
		k = low
	}
	return min(max(k, 1), n)
}

// partition is what this admin knows of its share.
type partition struct {
	mu      sync.Mutex
	p       Partition // zero until read: see Partition
	changed chan struct{}
	// perAdmin is SetFiresPerAdmin's figure; 0: every live admin shares.
	perAdmin int64
	// rate is this admin's fires claimed a second (claimRate), and
	// sharing how many admins it counts as sharing the fires, both as
	// of the last read and published with the next renewal.
	rate    int64
	sharing int
	// marks are the counts of claimed fires at the reads of the last
	// rateWindow, oldest first (claimRate).
	marks []claimMark
	// adoptWork is whether the last read of the admins saw work for
	// AdoptDeadAdmins (adoptWork), and read whether there was one.
	adoptWork, read bool
	// adopt is sent to, if it has room, by each read that sees work for
	// AdoptDeadAdmins (AdoptWork).
	adopt chan struct{}
}

// AdoptWorkSeen reports whether the latest read of the admins (with the
// lease's last renewal) saw work for AdoptDeadAdmins, or none was read
// yet: an admin's adopting loop calls AdoptDeadAdmins, a round trip of
// its own, when it did, and now and then besides (the read may be a
// renewal old). False over SQLite.
func (s *Store) AdoptWorkSeen() bool {
	if s.pg == nil {
		return false
	}
	l := &s.pg.partition
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.adoptWork || !l.read
}

// AdoptWork returns a channel that receives when a read of the admins
// (with the lease's renewals) sees work for AdoptDeadAdmins
// (AdoptWorkSeen): the adopting loop waits on it rather than look
// itself. Nil over SQLite.
func (s *Store) AdoptWork() <-chan struct{} {
	if s.pg == nil {
		return nil
	}
	return s.pg.partition.adopt
}

// claimMark is the count of this admin's claimed fires at a moment.
type claimMark struct {
	at      time.Time
	claimed int64
}

// FiresPerAdminDefault is the carillon command's --fires-per-admin: about
// half of what one admin sends over PostgreSQL on a 2-core machine that
// also runs the database (BENCHMARKS.md).
const FiresPerAdminDefault = 2000

// rateWindow is how far back an admin's rate of claimed fires reaches.
const rateWindow = time.Second

// claimRate notes that claimed fires were claimed by now, and returns
// the fires claimed a second over the last rateWindow (at least the
// last read's span), with l.mu held.
func (l *partition) claimRate(now time.Time, claimed int64) int64 {
	l.marks = append(l.marks, claimMark{now, claimed})
	for len(l.marks) > 2 && now.Sub(l.marks[1].at) >= rateWindow {
		l.marks = l.marks[1:]
	}
	first := l.marks[0]
	span := now.Sub(first.at)
	if span <= 0 {
		return l.rate
	}
	return (claimed - first.claimed) * int64(time.Second) / int64(span)
}

// SetFiresPerAdmin makes the admins sharing a PostgreSQL database share
// the fires only as far as each takes at most n fires a second (the
// admin's --fires-per-admin); 0, the default, shares them between every
// live admin. Each admin reads its own figure: give them all the same.
// Call it before the loops start (what Open read without it is not
// published). Over SQLite it does nothing.
func (s *Store) SetFiresPerAdmin(n int64) {
	if s.pg != nil {
		l := &s.pg.partition
		l.mu.Lock()
		l.perAdmin, l.sharing = n, 0
		l.mu.Unlock()
	}
}

// published returns what this admin publishes with its lease: its fires
// claimed a second and how many admins it counts as sharing them.
func (s *db) published() (rate int64, sharing int) {
	l := &s.pg.partition
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.rate, l.sharing
}

// Partition returns the buckets this admin owns: every bucket over SQLite
// and before the live admins were read.
func (s *Store) Partition() Partition { return s.partition() }

// partition is Store.Partition.
func (s *db) partition() Partition {
	if s.pg == nil {
		return all
	}
	l := &s.pg.partition
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.p == (Partition{}) {
		return all
	}
	return l.p
}

// PartitionChanged returns a channel that receives after the buckets this
// admin owns changed (an admin joined or died): its scan claims the
// jobs it now owns at once. Nil over SQLite. Only one reader should take
// from it (the scheduler).
func (s *Store) PartitionChanged() <-chan struct{} {
	if s.pg == nil {
		return nil
	}
	l := &s.pg.partition
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.changed == nil {
		l.changed = make(chan struct{}, 1)
	}
	return l.changed
}

// partitionInterval is how often PartitionLoop reads the admins: as
// often as a lease of LeaseDuration is renewed.
const partitionInterval = LeaseDuration / 4

// PartitionLoop returns the service that reads, every partitionInterval,
// which buckets of due jobs this admin owns among the live admins (Open
// read them first), besides the lease's renewals (LeaseLoop), which read
// them too: tests whose stores renew a long lease rarely run it. Over
// SQLite it ends at once.
func (s *Store) PartitionLoop() service.Service {
	return service.NewLoop(func(stop context.Context) error {
		if s.pg == nil {
			return nil
		}
		return every(stop, partitionInterval, LeaseDuration, func(ctx context.Context) {
			_ = s.readPartition(ctx) // a failure keeps the buckets it owned
		})
	})
}

// readPartition reads the admins and sets what sharePartition sets from
// them. Each renewal of the lease reads them too (renewLeaseSQL):
// PartitionLoop is for admins whose lease is renewed rarely (tests on a
// long lease).
func (s *db) readPartition(ctx context.Context) error {
	admins, err := s.readAdmins(ctx)
	if err != nil {
		return fmt.Errorf("store: read the admins: %w", err)
	}
	s.sharePartition(admins)
	return nil
}

// sharePartition sets, from the admins read, the buckets this admin owns
// among the live ones (with the fires each claims a second and how many
// it counts as sharing them), and whether AdoptDeadAdmins has work.
func (s *db) sharePartition(all []adminRow) {
	var live []string
	var total int64
	current := 0
	for _, r := range all {
		if !r.alive || r.adoptedBy != "" {
			continue
		}
		live = append(live, r.id)
		if r.id != s.pg.adminID { // its own, fresher, below
			total += r.rate
			current = max(current, r.sharing)
		}
	}
	now := time.Now()
	l := &s.pg.partition
	l.mu.Lock()
	defer l.mu.Unlock()
	l.adoptWork, l.read = adoptWork(all, s.pg.adminID), true
	if l.adoptWork {
		select {
		case l.adopt <- struct{}{}:
		default:
		}
	}
	l.rate = l.claimRate(now, s.pg.claimed.Load())
	l.sharing = sharingOf(total+l.rate, max(current, l.sharing), len(live), l.perAdmin)
	p := partitionOf(live, s.pg.adminID, l.sharing)
	if p == l.p {
		return
	}
	l.p = p
	if l.changed == nil {
		l.changed = make(chan struct{}, 1)
	}
	select {
	case l.changed <- struct{}{}:
	default:
	}
}

// bucketSQL is a row's bucket (BucketOf), as the indexes jobs_due and
// workflows_due hold it (migration 0024).
const bucketSQL = `((id * 633) % 1024)`

// inBuckets is the condition that a row's bucket is in [lo, hi), both SQL
// expressions: conditions on a column of the scan's index, which
// PostgreSQL checks on its entries without reading the rows.
func inBuckets(lo, hi string) string {
	return ` AND ` + bucketSQL + ` >= ` + lo + ` AND ` + bucketSQL + ` < ` + hi
}

// shared returns the query of a scan shared between admins: q (a SELECT
// whose WHERE the branches extend) over the rows of the buckets [lo, hi)
// due at or before own, and over the other buckets' rows due at or before
// takeover, each branch and the whole ordered and limited by tail. Each
// branch is one range of the scan's index.
func shared(q, own, takeover, lo, hi, tail string) string {
	branch := func(bound, lo, hi string) string {
		return `(` + q + ` AND next_fire_at <= ` + bound + inBuckets(lo, hi) + ` ` + tail + `)`
	}
	return branch(own, lo, hi) + ` UNION ALL ` + branch(takeover, `0`, lo) + ` UNION ALL ` +
		branch(takeover, hi, strconv.Itoa(Buckets)) + ` ` + tail
}

// nextShared returns the query of the earliest next fire of a scan shared
// between admins: q (a SELECT of next_fire_at whose WHERE it extends,
// ordered and limited to one row by tail) over the buckets [$1, $2), and
// over the others.
func nextShared(q, tail string) string { return `SELECT ` + nextSharedColumns(q, tail) }

// nextSharedColumns returns the two columns of nextShared's query, own
// and others, for a query that reads more besides them.
func nextSharedColumns(q, tail string) string {
	branch := func(lo, hi string) string { return `(` + q + inBuckets(lo, hi) + ` ` + tail + `)` }
	return branch(`$1`, `$2`) + `, least(` + branch(`0`, `$1`) + `, ` + branch(`$2`, strconv.Itoa(Buckets)) + `)`
}

// nextFires reads the earliest next fire of this admin's buckets (own)
// and of the others' (zero for an admin alone): with plain, a query of
// one column, for an admin alone; with shared (nextShared) otherwise.
func (s *db) nextFires(ctx context.Context, plain, shared string) (own, others time.Time, err error) {
	var o, x sql.NullInt64
	if p := s.partition(); p.All() {
		err = s.r.QueryRowContext(ctx, plain).Scan(&o)
	} else {
		err = s.r.QueryRowContext(ctx, shared, p.Lo, p.Hi).Scan(&o, &x)
	}
	if errors.Is(err, sql.ErrNoRows) {
		err = nil
	}
	return fromMillis(o), fromMillis(x), err
}
