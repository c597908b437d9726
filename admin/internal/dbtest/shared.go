package dbtest

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/carillonhq/carillon/admin/internal/store"
)

// Shared opens n admins over one new PostgreSQL database (Postgres.DB),
// each renewing its lease (Open) and reading which buckets of due jobs it
// owns (store.PartitionLoop), and waits until they share the due jobs
// between them (AwaitPartitions). It returns them and the database.
func Shared(tb testing.TB, n int) (admins []*store.Store, db string) {
	tb.Helper()
	db = Postgres.DB(tb)
	admins = make([]*store.Store, n)
	for i := range admins {
		admins[i] = Open(tb, db)
		loop := admins[i].PartitionLoop()
		if err := loop.Start(context.Background()); err != nil {
			tb.Fatal(err)
		}
		tb.Cleanup(loop.Stop)
	}
	AwaitPartitions(tb, admins)
	return admins, db
}

// AwaitPartitions waits until the buckets that admins own (store.Partition)
// split every bucket between them, each its own range, and fails the
// test if that takes more than ten seconds: each reads the live admins
// every quarter of a second (store.PartitionLoop).
func AwaitPartitions(tb testing.TB, admins []*store.Store) {
	tb.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		got := make([]store.Partition, len(admins))
		for i, a := range admins {
			got[i] = a.Partition()
		}
		if Tiles(got) {
			return
		}
		if time.Now().After(deadline) {
			tb.Fatalf("the buckets of %d admins are still %v", len(admins), got)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// Tiles reports whether ps cover every bucket once.
func Tiles(ps []store.Partition) bool {
	ps = slices.SortedFunc(slices.Values(ps), func(a, b store.Partition) int { return a.Lo - b.Lo })
	at := 0
	for _, p := range ps {
		if p.Lo != at || p.Hi <= p.Lo {
			return false
		}
		at = p.Hi
	}
	return at == store.Buckets
}
