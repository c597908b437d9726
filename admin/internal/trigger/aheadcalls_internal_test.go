package trigger

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/carillonhq/carillon/internal/clock"
	carillonv1 "github.com/carillonhq/carillon/proto/carillon/v1"
)

// batchRecorder is an executor's RunBatch for aheadCalls: it records the
// run IDs of each batch, and refuses the runs named in refuse.
type batchRecorder struct {
	mu      sync.Mutex
	batches [][]int64
	refuse  map[int64]bool
	err     error
	short   bool // answer one outcome too few
}

func (r *batchRecorder) call(_ context.Context, reqs []*carillonv1.RunRequest) (*carillonv1.RunBatchResponse, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	ids := make([]int64, len(reqs))
	res := &carillonv1.RunBatchResponse{}
	for i, req := range reqs {
		ids[i] = req.RunId
		o := &carillonv1.RunOutcome{}
		if r.refuse[req.RunId] {
			o.Code, o.Message = "already_exists", fmt.Sprint("run ", req.RunId)
		}
		res.Outcomes = append(res.Outcomes, o)
	}
	r.batches = append(r.batches, ids)
	if r.short {
		res.Outcomes = res.Outcomes[1:]
	}
	return res, r.err
}

// take returns the batches made so far and forgets them.
func (r *batchRecorder) take() [][]int64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	b := r.batches
	r.batches = nil
	return b
}

func runReqs(ids ...int64) []*carillonv1.RunRequest {
	reqs := make([]*carillonv1.RunRequest, len(ids))
	for i, id := range ids {
		reqs[i] = &carillonv1.RunRequest{RunId: id}
	}
	return reqs
}

// refused returns the run IDs of reqs whose outcome has a code.
func refused(reqs []*carillonv1.RunRequest, sc sharedCall) []int64 {
	var ids []int64
	for i, o := range sc.outcomes {
		if o.GetCode() != "" {
			ids = append(ids, reqs[i].RunId)
		}
	}
	return ids
}

// TestAheadCallsShare runs on a fake clock (synctest): calls sent ahead to
// one executor within aheadLinger of the first share its RunBatch, and
// each learns its own runs' outcomes; a call whose instant is too near to
// wait that long, or to another executor, goes in a RunBatch of its own;
// a batch that fills leaves at once.
func TestAheadCallsShare(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		a := newAheadCalls(clock.Wall) // the bubble's time
		rec := &batchRecorder{refuse: map[int64]bool{4: true}}
		key, other := aheadKey{1, "10.0.0.1:9999"}, aheadKey{1, "10.0.0.2:9999"}
		start := time.Now()
		due := start.Add(300 * time.Millisecond)
		type sent struct {
			reqs []*carillonv1.RunRequest
			sc   sharedCall
			at   time.Duration // when send returned, after start
		}
		var mu sync.Mutex
		got := map[string]sent{}
		send := func(name string, k aheadKey, due time.Time, ids ...int64) {
			reqs, from := runReqs(ids...), start
			go func() {
				sc := a.send(ctx, k, reqs, due, rec.call)
				mu.Lock()
				got[name] = sent{reqs, sc, time.Since(from)}
				mu.Unlock()
			}()
			synctest.Wait()
		}
		send("first", key, due, 1, 2)
		time.Sleep(5 * time.Millisecond)
		send("second", key, due.Add(time.Millisecond), 3, 4, 5)
		send("other executor", other, due, 6)
		// Due in 40 ms: may wait 10 ms, the first leaves in 15.
		send("near", key, time.Now().Add(40*time.Millisecond), 7)
		// A call of a burst leaves at once.
		burst := make([]int64, aheadSmall)
		for i := range burst {
			burst[i] = int64(1000 + i)
		}
		send("burst", other, due, burst...)
		time.Sleep(time.Second)

		want := map[string]struct {
			refused     []int64
			runs, calls int
			at          time.Duration
		}{
			"first":          {nil, 5, 2, aheadLinger},
			"second":         {[]int64{4}, 5, 2, aheadLinger},
			"other executor": {nil, 1, 1, 5*time.Millisecond + aheadLinger},
			"near":           {nil, 1, 1, 15 * time.Millisecond},
			"burst":          {nil, aheadSmall, 1, 5 * time.Millisecond},
		}
		mu.Lock()
		for name, w := range want {
			s, ok := got[name]
			if !ok {
				t.Errorf("%s: send did not return", name)
				continue
			}
			if s.sc.err != nil || len(s.sc.outcomes) != len(s.reqs) || s.sc.runs != w.runs || s.sc.calls != w.calls || s.at != w.at ||
				!cmp.Equal(refused(s.reqs, s.sc), w.refused) {
				t.Errorf("%s: err %v, %d outcomes for %d runs, refused %v, in a batch of %d runs of %d calls, returned after %v; "+
					"want no error, refused %v, a batch of %d runs of %d calls, after %v",
					name, s.sc.err, len(s.sc.outcomes), len(s.reqs), refused(s.reqs, s.sc), s.sc.runs, s.sc.calls, s.at,
					w.refused, w.runs, w.calls, w.at)
			}
		}
		if b, want := rec.take(), [][]int64{burst, {7}, {1, 2, 3, 4, 5}, {6}}; !cmp.Equal(b, want) {
			t.Errorf("RunBatches %v, want %v", b, want)
		}
		mu.Unlock()

		// aheadCallsMax calls fill a batch: it leaves when the last joins.
		start = time.Now()
		for i := range aheadCallsMax {
			send(fmt.Sprint("full ", i), key, start.Add(time.Second), int64(100+i))
		}
		if b := rec.take(); len(b) != 1 || len(b[0]) != aheadCallsMax {
			t.Errorf("RunBatches %v, want one of %d runs made at once", b, aheadCallsMax)
		}
		time.Sleep(time.Second)
		mu.Lock()
		if s := got["full 0"]; s.at != 0 || s.sc.calls != aheadCallsMax {
			t.Errorf("the first of a full batch returned after %v, its batch of %d calls; want at once, %d calls", s.at, s.sc.calls, aheadCallsMax)
		}
		mu.Unlock()
	})
}

// TestAheadCallsFail: a RunBatch that fails, or answers a number of
// outcomes other than its runs', fails every call that shared it.
func TestAheadCallsFail(t *testing.T) {
	t.Parallel()
	for _, rec := range []*batchRecorder{{err: errors.New("unavailable")}, {short: true}} {
		synctest.Test(t, func(t *testing.T) {
			a := newAheadCalls(clock.Wall)
			key := aheadKey{1, "10.0.0.1:9999"}
			due := time.Now().Add(300 * time.Millisecond)
			var errs [2]error
			var wg sync.WaitGroup
			for i := range errs {
				wg.Go(func() { errs[i] = a.send(context.Background(), key, runReqs(int64(i)), due, rec.call).err })
				synctest.Wait()
			}
			wg.Wait()
			if len(rec.take()) != 1 || errs[0] == nil || errs[1] == nil {
				t.Errorf("%d RunBatches, errors %v; want one RunBatch, both calls failed", len(rec.batches), errs)
			}
		})
	}
}
