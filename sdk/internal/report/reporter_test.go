package report

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	carillonv1 "github.com/carillonhq/carillon/proto/carillon/v1"
)

// fakeAdmin is a ReportResults that fails while down.
type fakeAdmin struct {
	mu        sync.Mutex
	down      bool
	calls     []time.Time
	delivered map[int64]int
	batches   []int
	sizes     []int // of each batch taken: its results' size()
}

func (a *fakeAdmin) send(_ context.Context, batch []Result) ([]Refusal, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.calls = append(a.calls, time.Now())
	if a.down {
		return nil, errors.New("admin down")
	}
	size := 0
	for _, r := range batch {
		a.delivered[r.RunID]++
		size += r.size()
	}
	a.batches = append(a.batches, len(batch))
	a.sizes = append(a.sizes, size)
	return nil, nil
}

func (a *fakeAdmin) setDown(down bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.down = down
}

func newTestReporter(t *testing.T, dir string, a *fakeAdmin) *Reporter {
	t.Helper()
	logger := slog.New(slog.NewTextHandler(t.Output(), nil))
	sp, err := OpenSpool(dir, logger)
	if err != nil {
		t.Fatal(err)
	}
	return NewReporter(sp, a.send, logger)
}

func TestReporter(t *testing.T) {
	t.Parallel()

	t.Run("RetriesWithBackoffUntilAcknowledged", func(t *testing.T) {
		t.Parallel()
		synctest.Test(t, func(t *testing.T) {
			dir := t.TempDir()
			a := &fakeAdmin{down: true, delivered: make(map[int64]int)}
			r := newTestReporter(t, dir, a)
			ctx, cancel := context.WithCancel(t.Context())
			var wg sync.WaitGroup
			wg.Go(func() { r.Run(ctx, nil) })
			synctest.Wait() // idle, waiting for results

			start := time.Now()
			var results []Result
			for id := int64(1); id <= 3; id++ {
				results = append(results, NewResult(id, carillonv1.RunStatus_RUN_STATUS_SUCCEEDED, "", time.Now()))
			}
			r.AddAll(results)
			// Down for 4 attempts: at once (nothing was sent for reportIdle), then after backoffs of 1s, 2s and
			// 4s, each plus up to a quarter of jitter: by +8.755s at most. The
			// fifth comes 8s to 10s after the fourth.
			time.Sleep(9 * time.Second)
			synctest.Wait()
			a.setDown(false)
			time.Sleep(20 * time.Second)
			synctest.Wait()

			a.mu.Lock()
			calls := append([]time.Time(nil), a.calls...)
			a.mu.Unlock()
			if len(calls) != 5 {
				t.Fatalf("%d calls, want 4 failed and 1 that succeeds", len(calls))
			}
			if calls[0] != start {
				t.Errorf("first call at +%v, want at once", calls[0].Sub(start))
			}
			for i, want := range []time.Duration{time.Second, 2 * time.Second, 4 * time.Second, 8 * time.Second} {
				if got := calls[i+1].Sub(calls[i]); got < want || got > want*5/4 {
					t.Errorf("retry %d after %v, want %v to %v", i+1, got, want, want*5/4)
				}
			}
			for id := int64(1); id <= 3; id++ {
				if a.delivered[id] != 1 {
					t.Errorf("run %d delivered %d times, want once", id, a.delivered[id])
				}
			}
			if n := unacknowledged(t, dir); n != 0 {
				t.Errorf("%d results left unacknowledged in the spool", n)
			}
			cancel()
			wg.Wait()
		})
	})

	t.Run("BatchesWhileBusy", func(t *testing.T) {
		t.Parallel()
		synctest.Test(t, func(t *testing.T) {
			a := &fakeAdmin{delivered: make(map[int64]int)}
			r := newTestReporter(t, t.TempDir(), a)
			ctx, cancel := context.WithCancel(t.Context())
			var wg sync.WaitGroup
			wg.Go(func() { r.Run(ctx, nil) })
			synctest.Wait()
			start := time.Now()
			r.Add(NewResult(1, carillonv1.RunStatus_RUN_STATUS_SUCCEEDED, "", start)) // idle: sent at once
			synctest.Wait()
			r.Add(NewResult(2, carillonv1.RunStatus_RUN_STATUS_SUCCEEDED, "", start)) // just after a send: waits for company
			r.Add(NewResult(3, carillonv1.RunStatus_RUN_STATUS_SUCCEEDED, "", start))
			synctest.Wait()
			time.Sleep(reportBatchDelay)
			synctest.Wait()
			a.mu.Lock()
			calls, batches := slices.Clone(a.calls), slices.Clone(a.batches)
			a.mu.Unlock()
			if len(calls) != 2 || calls[0] != start || calls[1] != start.Add(reportBatchDelay) || !slices.Equal(batches, []int{1, 2}) {
				t.Errorf("calls at %v with %v results, want one at once with 1, one %v later with 2", calls, batches, reportBatchDelay)
			}
			cancel()
			wg.Wait()
		})
	})

	t.Run("BatchesAndBoundsMemory", func(t *testing.T) {
		t.Parallel()
		synctest.Test(t, func(t *testing.T) {
			dir := t.TempDir()
			a := &fakeAdmin{down: true, delivered: make(map[int64]int)}
			r := newTestReporter(t, dir, a)
			ctx, cancel := context.WithCancel(t.Context())
			var wg sync.WaitGroup
			wg.Go(func() { r.Run(ctx, nil) })

			const n = 2500
			for id := int64(1); id <= n; id++ {
				r.Add(NewResult(id, carillonv1.RunStatus_RUN_STATUS_FAILED, "no", time.Now()))
			}
			synctest.Wait()
			if p := r.Pending(); p > reportMemMax {
				t.Errorf("%d results in memory, want at most %d", p, reportMemMax)
			}
			if got := unacknowledged(t, dir); got != n {
				t.Errorf("%d results on disk, want %d", got, n)
			}
			a.setDown(false)
			time.Sleep(2 * time.Minute)
			synctest.Wait()
			a.mu.Lock()
			for id := int64(1); id <= n; id++ {
				if a.delivered[id] != 1 {
					t.Errorf("run %d delivered %d times, want once", id, a.delivered[id])
				}
			}
			for _, b := range a.batches {
				if b > reportBatchMax {
					t.Errorf("batch of %d, want at most %d", b, reportBatchMax)
				}
			}
			a.mu.Unlock()
			if got := unacknowledged(t, dir); got != 0 {
				t.Errorf("%d results left unacknowledged in the spool", got)
			}
			cancel()
			wg.Wait()
		})
	})

	// A backlog goes in calls as large as reportBatchMax results or
	// reportBatchBytes allow: a burst's results are not held to a few
	// hundred a round trip, and a call of long messages and outputs stays
	// within what an admin reads.
	t.Run("BacklogInLargeCallsBoundedInBytes", func(t *testing.T) {
		t.Parallel()
		synctest.Test(t, func(t *testing.T) {
			a := &fakeAdmin{down: true, delivered: make(map[int64]int)}
			r := newTestReporter(t, t.TempDir(), a)
			ctx, cancel := context.WithCancel(t.Context())
			var wg sync.WaitGroup
			wg.Go(func() { r.Run(ctx, nil) })

			// The large results come to 7 MB together, past the admin's
			// bound on a request.
			const small, large, adminMax = 3000, 100, 4 << 20
			var results []Result
			for id := int64(1); id <= small; id++ {
				results = append(results, NewResult(id, carillonv1.RunStatus_RUN_STATUS_SUCCEEDED, "ok", time.Now()))
			}
			for id := int64(small + 1); id <= small+large; id++ {
				res := NewResult(id, carillonv1.RunStatus_RUN_STATUS_FAILED, strings.Repeat("m", MaxMessageBytes), time.Now())
				res.Outputs = map[string]string{"out": strings.Repeat("o", 60<<10)}
				results = append(results, res)
			}
			r.AddAll(results)
			synctest.Wait()
			a.setDown(false)
			time.Sleep(time.Minute) // the backoff's next try
			synctest.Wait()
			a.mu.Lock()
			batches, sizes := slices.Clone(a.batches), slices.Clone(a.sizes)
			for id := int64(1); id <= small+large; id++ {
				if a.delivered[id] != 1 {
					t.Errorf("run %d delivered %d times, want once", id, a.delivered[id])
				}
			}
			a.mu.Unlock()
			if len(batches) == 0 || batches[0] <= small {
				t.Errorf("batches %v, want the first to take the %d small results and more", batches, small)
			}
			for i, size := range sizes {
				if size > adminMax {
					t.Errorf("batch %d: %d results of %d bytes, want at most %d bytes", i, batches[i], size, adminMax)
				}
			}
			cancel()
			wg.Wait()
		})
	})

	t.Run("SurvivesRestart", func(t *testing.T) {
		t.Parallel()
		synctest.Test(t, func(t *testing.T) {
			dir := t.TempDir()
			a := &fakeAdmin{down: true, delivered: make(map[int64]int)}
			first := newTestReporter(t, dir, a)
			for id := int64(1); id <= 5; id++ {
				first.Add(NewResult(id, carillonv1.RunStatus_RUN_STATUS_KILLED, "killed", time.Now()))
			}
			if err := first.Flush(t.Context()); err == nil {
				t.Fatal("flush to a down admin succeeded")
			}
			// A new process, same directory.
			a.setDown(false)
			second := newTestReporter(t, dir, a)
			if err := second.Flush(t.Context()); err != nil {
				t.Fatal(err)
			}
			for id := int64(1); id <= 5; id++ {
				if a.delivered[id] != 1 {
					t.Errorf("run %d delivered %d times, want once", id, a.delivered[id])
				}
			}
			if got := unacknowledged(t, dir); got != 0 {
				t.Errorf("%d results left unacknowledged in the spool", got)
			}
		})
	})
}

func TestSpool(t *testing.T) {
	t.Parallel()

	at := time.Date(2026, 1, 2, 3, 4, 5, 6, time.UTC)
	res := func(id int64, status carillonv1.RunStatus, msg string) Result {
		return NewResult(id, status, msg, at)
	}
	// open opens the spool in dir as a new process would; what it logs
	// goes to logged.
	open := func(t *testing.T, dir string, logged *bytes.Buffer) *Spool {
		t.Helper()
		w := t.Output()
		if logged != nil {
			w = io.MultiWriter(w, logged)
		}
		sp, err := OpenSpool(dir, slog.New(slog.NewTextHandler(w, nil)))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { sp.Close() })
		return sp
	}
	loadAll := func(t *testing.T, sp *Spool) []Result {
		t.Helper()
		got, more, err := sp.load(1000, func(Key) bool { return false })
		if err != nil || more {
			t.Fatalf("load: more %v, %v", more, err)
		}
		return got
	}
	segments := func(t *testing.T, dir string) []string {
		t.Helper()
		names, err := filepath.Glob(filepath.Join(dir, "*.spool"))
		if err != nil {
			t.Fatal(err)
		}
		for i, n := range names {
			names[i] = filepath.Base(n)
		}
		return names
	}

	t.Run("RoundTrip", func(t *testing.T) {
		t.Parallel()
		dir := t.TempDir()
		want := []Result{
			res(42, carillonv1.RunStatus_RUN_STATUS_TIMED_OUT, "sdk: run timed out after 1s"),
			res(7, carillonv1.RunStatus_RUN_STATUS_SUCCEEDED, ""),
			res(9, carillonv1.RunStatus_RUN_STATUS_FAILED, "line one\nline \"two\" é"),
		}
		sp := open(t, dir, nil)
		for _, r := range want {
			if err := sp.put(r); err != nil {
				t.Fatal(err)
			}
		}
		if got := loadAll(t, sp); !sameResults(got, want) {
			t.Errorf("load = %v, want %v (in the order put)", got, want)
		}
		got, more, err := sp.load(1, func(k Key) bool { return k.ID == 42 })
		if err != nil || !more || len(got) != 1 || !sameResult(got[0], want[1]) {
			t.Errorf("load(1, skip 42) = %v, more %v, %v; want [%v], more", got, more, err, want[1])
		}
		if got := loadAll(t, open(t, dir, nil)); !sameResults(got, want) {
			t.Errorf("after reopening, load = %v, want %v", got, want)
		}
	})

	t.Run("AckPersistsAcrossReopen", func(t *testing.T) {
		t.Parallel()
		dir := t.TempDir()
		sp := open(t, dir, nil)
		for id := int64(1); id <= 3; id++ {
			if err := sp.put(res(id, carillonv1.RunStatus_RUN_STATUS_SUCCEEDED, "")); err != nil {
				t.Fatal(err)
			}
		}
		if err := sp.ack(noDB(1, 2)); err != nil {
			t.Fatal(err)
		}
		want := []Result{res(3, carillonv1.RunStatus_RUN_STATUS_SUCCEEDED, "")}
		if got := loadAll(t, sp); !sameResults(got, want) {
			t.Errorf("load after ack = %v, want %v", got, want)
		}
		again := open(t, dir, nil)
		if got := loadAll(t, again); !sameResults(got, want) {
			t.Errorf("after reopening, load = %v, want %v: an acknowledged result would be sent again", got, want)
		}
	})

	t.Run("RunsOfDatabasesApart", func(t *testing.T) {
		t.Parallel()
		dir := t.TempDir()
		sp := open(t, dir, nil)
		of := func(db string, id int64, msg string) Result {
			r := res(id, carillonv1.RunStatus_RUN_STATUS_FAILED, msg)
			r.DatabaseID = db
			return r
		}
		// Run 1 of three databases, and run 2 of one: four results.
		all := []Result{of("", 1, "legacy"), of("a", 1, "of a"), of("b\"<&>", 1, "of b"), of("a", 2, "a 2")}
		if err := sp.putAll(all); err != nil {
			t.Fatal(err)
		}
		if got := loadAll(t, sp); !sameResults(got, all) {
			t.Errorf("load = %v, want %v", got, all)
		}
		if !sp.Has(Key{"a", 1}) || sp.Has(Key{"c", 1}) {
			t.Error("has is wrong")
		}
		if err := sp.ack([]Key{{"a", 1}, {"", 1}}); err != nil {
			t.Fatal(err)
		}
		want := []Result{all[2], all[3]}
		if got := loadAll(t, sp); !sameResults(got, want) {
			t.Errorf("after acknowledging run 1 of a and run 1 without a database, load = %v, want %v", got, want)
		}
		again := open(t, dir, nil)
		if got := loadAll(t, again); !sameResults(got, want) {
			t.Errorf("after reopening, load = %v, want %v", got, want)
		}
		keys := again.Keys()
		slices.SortFunc(keys, func(x, y Key) int { return strings.Compare(x.DB, y.DB) })
		if !slices.Equal(keys, []Key{{"a", 2}, {"b\"<&>", 1}}) {
			t.Errorf("keys = %v", keys)
		}
	})

	// load takes the oldest unacknowledged results in the order of their
	// lines, as sorting every one would, whatever was put, replaced,
	// acknowledged or skipped, before and after a reopen, and reads
	// them whole, large lines too.
	t.Run("LoadOldestFirst", func(t *testing.T) {
		t.Parallel()
		dir := t.TempDir()
		sp := open(t, dir, nil)
		sp.maxLines = 7
		rng := rand.New(rand.NewPCG(1, 2))
		// want is load's answer by sorting every pending result.
		want := func(sp *Spool, limit int, skip func(Key) bool) (ids []int64, more bool) {
			type item struct {
				k   Key
				ref spoolRef
			}
			var items []item
			for k, ref := range sp.pending {
				if !skip(k) {
					items = append(items, item{k, ref})
				}
			}
			slices.SortFunc(items, func(a, b item) int {
				if a.ref.seg.seq != b.ref.seg.seq {
					return int(a.ref.seg.seq - b.ref.seg.seq)
				}
				return int(a.ref.off - b.ref.off)
			})
			for i, it := range items {
				if i == limit {
					return ids, true
				}
				ids = append(ids, it.k.ID)
			}
			return ids, false
		}
		check := func(sp *Spool, step int) {
			t.Helper()
			limit := 1 + rng.IntN(12)
			skip := func(k Key) bool { return k.ID%5 == int64(step%5) }
			wantIDs, wantMore := want(sp, limit, skip)
			got, more, err := sp.load(limit, skip)
			if err != nil {
				t.Fatalf("step %d: load: %v", step, err)
			}
			var ids []int64
			for _, r := range got {
				ids = append(ids, r.RunID)
				if o := r.Outputs["o"]; o != "" && len(o) != loadSpanMax/3 {
					t.Fatalf("step %d: run %d's outputs read %d bytes, want %d", step, r.RunID, len(o), loadSpanMax/3)
				}
			}
			if !slices.Equal(ids, wantIDs) || more != wantMore {
				t.Fatalf("step %d: load(%d) = %v, more %v; want %v, more %v", step, limit, ids, more, wantIDs, wantMore)
			}
		}
		for step := range 300 {
			switch op := rng.IntN(3); {
			case op < 2: // results, some replacing earlier ones
				var batch []Result
				for range 1 + rng.IntN(4) {
					r := res(1+rng.Int64N(40), carillonv1.RunStatus_RUN_STATUS_SUCCEEDED, fmt.Sprint("step ", step))
					if rng.IntN(10) == 0 { // a few large lines: load reads a segment in spans of loadSpanMax
						r.Outputs = map[string]string{"o": strings.Repeat("o", loadSpanMax/3)}
					}
					batch = append(batch, r)
				}
				if err := sp.putAll(batch); err != nil {
					t.Fatal(err)
				}
			default: // acknowledgements, in any order
				var ids []int64
				for range 1 + rng.IntN(6) {
					ids = append(ids, 1+rng.Int64N(40))
				}
				if err := sp.ack(noDB(ids...)); err != nil {
					t.Fatal(err)
				}
			}
			check(sp, step)
			if step == 150 {
				sp.Close()
				sp = open(t, dir, nil)
				sp.maxLines = 7
				check(sp, step)
			}
		}
	})

	t.Run("PutAllAcrossSegments", func(t *testing.T) {
		t.Parallel()
		dir := t.TempDir()
		sp := open(t, dir, nil)
		sp.maxLines = 4 // a batch goes whole into the segment it starts in
		var want []Result
		for id := int64(1); id <= 9; id++ {
			want = append(want, res(id, carillonv1.RunStatus_RUN_STATUS_FAILED, fmt.Sprintf("run %d \"failed\"", id)))
		}
		for _, batch := range [][]Result{want[:3], want[3:8], want[8:]} {
			if err := sp.putAll(batch); err != nil {
				t.Fatal(err)
			}
		}
		if got := segments(t, dir); len(got) != 2 {
			t.Errorf("segments %v, want 2: one for the first two batches (8 lines), one for the third", got)
		}
		if err := sp.ack(noDB(1, 2, 3, 4, 9)); err != nil {
			t.Fatal(err)
		}
		rest := want[4:8]
		if got := loadAll(t, sp); !sameResults(got, rest) {
			t.Errorf("load = %v, want %v", got, rest)
		}
		if got := loadAll(t, open(t, dir, nil)); !sameResults(got, rest) {
			t.Errorf("after reopening, load = %v, want %v", got, rest)
		}
	})

	t.Run("LaterResultOfARunWins", func(t *testing.T) {
		t.Parallel()
		dir := t.TempDir()
		sp := open(t, dir, nil)
		first := res(5, carillonv1.RunStatus_RUN_STATUS_FAILED, "first")
		later := res(5, carillonv1.RunStatus_RUN_STATUS_KILLED, "later")
		for _, r := range []Result{first, later} {
			if err := sp.put(r); err != nil {
				t.Fatal(err)
			}
		}
		if got := loadAll(t, sp); !sameResults(got, []Result{later}) {
			t.Errorf("load = %v, want only the later result", got)
		}
		if got := loadAll(t, open(t, dir, nil)); !sameResults(got, []Result{later}) {
			t.Errorf("after reopening, load = %v, want only the later result", got)
		}
	})

	t.Run("TornAndBadLinesAreSkipped", func(t *testing.T) {
		t.Parallel()
		dir := t.TempDir()
		sp := open(t, dir, nil)
		ok := []Result{res(1, carillonv1.RunStatus_RUN_STATUS_SUCCEEDED, ""), res(2, carillonv1.RunStatus_RUN_STATUS_SUCCEEDED, "")}
		if err := sp.put(ok[0]); err != nil {
			t.Fatal(err)
		}
		seg := filepath.Join(dir, segments(t, dir)[0])
		appendTo := func(s string) {
			f, err := os.OpenFile(seg, os.O_WRONLY|os.O_APPEND, 0)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			if _, err := f.WriteString(s); err != nil {
				t.Fatal(err)
			}
		}
		appendTo("{garbage\n")
		if err := sp.put(ok[1]); err != nil {
			t.Fatal(err)
		}
		appendTo(`{"run_id":3,"status":"RUN_ST`) // a crash cut this line
		sp.Close()

		var logged bytes.Buffer
		next := open(t, dir, &logged)
		if got := loadAll(t, next); !sameResults(got, ok) {
			t.Errorf("load = %v, want %v", got, ok)
		}
		for _, want := range []string{"spooled line skipped", "torn last spooled line skipped"} {
			if !strings.Contains(logged.String(), want) {
				t.Errorf("nothing logged about a %q:\n%s", want, logged.String())
			}
		}
		// New lines go to a new segment: they never run into the torn one.
		third := res(4, carillonv1.RunStatus_RUN_STATUS_FAILED, "x")
		if err := next.put(third); err != nil {
			t.Fatal(err)
		}
		if n := len(segments(t, dir)); n != 2 {
			t.Errorf("%d segments, want the old one and a new one", n)
		}
		if got, want := loadAll(t, open(t, dir, nil)), append(ok, third); !sameResults(got, want) {
			t.Errorf("after reopening, load = %v, want %v", got, want)
		}
	})

	t.Run("AcknowledgedPrefixIsDeleted", func(t *testing.T) {
		t.Parallel()
		dir := t.TempDir()
		sp := open(t, dir, nil)
		sp.maxLines = 3
		// Segments of 3 lines: [1 2 3] [4 5 6] [7 8 ack(4)] [ack(1 2 3)] ...
		for id := int64(1); id <= 8; id++ {
			if err := sp.put(res(id, carillonv1.RunStatus_RUN_STATUS_SUCCEEDED, "")); err != nil {
				t.Fatal(err)
			}
		}
		if n := len(segments(t, dir)); n != 3 {
			t.Fatalf("%d segments after 8 results, want 3", n)
		}
		first := segments(t, dir)[0]
		if err := sp.ack(noDB(4)); err != nil {
			t.Fatal(err)
		}
		if n := len(segments(t, dir)); n != 3 {
			t.Errorf("%d segments, want 3: the oldest still holds unacknowledged results", n)
		}
		if err := sp.ack(noDB(1, 2, 3)); err != nil {
			t.Fatal(err)
		}
		if names := segments(t, dir); slices.Contains(names, first) || len(names) != 3 {
			t.Errorf("segments %v: want the oldest, fully acknowledged, deleted", names)
		}
		want := []Result{
			res(5, carillonv1.RunStatus_RUN_STATUS_SUCCEEDED, ""),
			res(6, carillonv1.RunStatus_RUN_STATUS_SUCCEEDED, ""),
			res(7, carillonv1.RunStatus_RUN_STATUS_SUCCEEDED, ""),
			res(8, carillonv1.RunStatus_RUN_STATUS_SUCCEEDED, ""),
		}
		if got := loadAll(t, open(t, dir, nil)); !sameResults(got, want) {
			t.Errorf("after reopening, load = %v, want %v: run 4's ack must survive", got, want)
		}
		if err := sp.ack(noDB(5, 6, 7, 8)); err != nil {
			t.Fatal(err)
		}
		sp.Close()
		if names := segments(t, dir); len(names) != 0 {
			t.Errorf("segments %v left once everything was acknowledged", names)
		}
	})

	t.Run("MovesInResultFilesOfAnOlderExecutor", func(t *testing.T) {
		t.Parallel()
		dir := t.TempDir()
		files := map[string]string{
			"42.json":   `{"run_id":42,"status":"RUN_STATUS_TIMED_OUT","message":"sdk: run timed out after 1s","finished_at":"2026-01-02T03:04:05.000000006Z"}`,
			"7.json":    "{garbage",
			"9-123.tmp": "half",
		}
		for name, content := range files {
			if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o600); err != nil {
				t.Fatal(err)
			}
		}
		sp := open(t, dir, nil)
		want := []Result{res(42, carillonv1.RunStatus_RUN_STATUS_TIMED_OUT, "sdk: run timed out after 1s")}
		if got := loadAll(t, sp); !sameResults(got, want) {
			t.Errorf("load = %v, want %v", got, want)
		}
		if _, err := os.Stat(filepath.Join(dir, "7.json.bad")); err != nil {
			t.Errorf("the corrupt file was not set aside: %v", err)
		}
		for _, name := range []string{"42.json", "9-123.tmp"} {
			if _, err := os.Stat(filepath.Join(dir, name)); err == nil {
				t.Errorf("%s is still there", name)
			}
		}
	})
}

// noDB returns the runs of ids without a database id.
func noDB(ids ...int64) []Key {
	keys := make([]Key, len(ids))
	for i, id := range ids {
		keys[i] = Key{ID: id}
	}
	return keys
}

// unacknowledged counts the results left unacknowledged in the spool in
// dir, as a new process would find them.
func unacknowledged(t *testing.T, dir string) int {
	t.Helper()
	n, err := Unacknowledged(dir)
	if err != nil {
		t.Fatal(err)
	}
	return n
}
