package dbtest

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/carillonhq/carillon/admin/internal/store"
)

// Open opens a store on db (a SQLite file or a PostgreSQL URL, as
// store.Open takes it), closed when the test ends. Over PostgreSQL it
// renews the store's lease from then on (LeaseLoop), as an admin does
// from Open to Close: a test may outlast a lease, and the trigger sends
// the runs it claimed only while the lease holds. The lease lasts a minute
// instead of a second (store.SetLeaseDuration): tests run on a fake clock
// (testing/synctest), which stands still while the database works, and no
// test opened here waits for a lease to run out. It starts no other loop:
// a test starts the ones it tests (store.Loops).
//
// A test may close the store itself (to reopen the database as a restarted
// admin would); the cleanup closes it again, which does no harm.
func Open(tb testing.TB, db string) *store.Store {
	tb.Helper()
	st, err := store.Open(context.Background(), db)
	// An admin's lock on the file is released when the last descriptor of
	// it closes: a process that a parallel test forks at the moment the
	// admin closes holds one until it execs (a few milliseconds).
	for try := 0; errors.Is(err, store.ErrLocked) && try < 50; try++ {
		time.Sleep(20 * time.Millisecond)
		st, err = store.Open(context.Background(), db)
	}
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { _ = st.Close() })
	if st.Shared() {
		st.SetLeaseDuration(time.Minute)
		lease := st.LeaseLoop()
		if err := lease.Start(context.Background()); err != nil {
			tb.Fatal(err)
		}
		tb.Cleanup(lease.Stop) // before Close: cleanups run last first
	}
	return st
}
