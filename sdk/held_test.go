package sdk

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	carillonv1 "github.com/carillonhq/carillon/proto/carillon/v1"
	"github.com/carillonhq/carillon/sdk/internal/report"
	"github.com/carillonhq/carillon/sdk/internal/runlog"
	"github.com/carillonhq/carillon/sdk/internal/runner"
)

// TestHeldRunsCutShort: a process killed while runs ran leaves their logs
// as it wrote them; the next process says ENDED only of the runs whose
// logs are whole (a record of a segment, or a file of its own with its end
// mark) or whose results wait in the spool, CUT_SHORT of a run whose log
// has a file of its own without its end mark, and nothing of a run whose
// log was still in memory.
func TestHeldRunsCutShort(t *testing.T) {
	t.Parallel()
	const db = "0123456789abcdef0123456789abcdef"
	dir := t.TempDir()
	first, err := runlog.Open(dir, time.Now)
	if err != nil {
		t.Fatal(err)
	}
	big := strings.Repeat("a line of a long log\n", runlog.SpillBytes/20)
	var open []*runlog.Log
	t.Cleanup(func() { // the files a killed process would have left open
		for _, l := range open {
			if f := l.File(); f != nil {
				_ = f.Close()
			}
		}
	})
	logOf := func(id int64, body string) *runlog.Log {
		l := runlog.NewLog(first, first.RunDir(first.Today(), db), id, time.Now)
		if _, err := l.Write([]byte(body)); err != nil {
			t.Fatal(err)
		}
		open = append(open, l)
		return l
	}
	logOf(1, big)                                         // over runlog.SpillBytes, its run killed: a file of its own, no end mark
	logOf(2, big)                                         // the same, its result in the spool
	if _, err := logOf(3, "short\n").Sync(); err != nil { // read while it ran, then killed
		t.Fatal(err)
	}
	logOf(4, "short\n")                           // in memory only when killed: nothing on disk
	if err := logOf(5, big).Close(); err != nil { // ended: a file and its end mark
		t.Fatal(err)
	}
	if err := first.CloseLogs([]*runlog.Log{logOf(6, big), logOf(7, "short\n")}); err != nil { // ended, as the finisher puts them away
		t.Fatal(err)
	}
	// The process is killed: its open files are as it left them.

	logs, err := runlog.Open(dir, time.Now)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = logs.Close(); _ = first.Close() })
	d := runner.New(runner.Config{Logs: logs, NowFunc: time.Now, Logger: slog.New(slog.NewTextHandler(t.Output(), nil)),
		ReportFunc: func(report.Result) {}, IdleTimeout: runner.IdleTimeoutDefault, AbandonAfter: runner.AbandonAfterDefault})
	svc := &service{d: d, spooled: func(k report.Key) bool { return k == report.Key{DB: db, ID: 2} }}
	ask := func(db string) map[int64]carillonv1.HeldRunState {
		t.Helper()
		res, err := svc.HeldRuns(context.Background(), &carillonv1.HeldRunsRequest{DatabaseId: db, RunIds: []int64{1, 2, 3, 4, 5, 6, 7, 8}})
		if err != nil {
			t.Fatal(err)
		}
		got := map[int64]carillonv1.HeldRunState{}
		for _, r := range res.GetRuns() {
			got[r.GetRunId()] = r.GetState()
		}
		return got
	}
	const (
		ended    = carillonv1.HeldRunState_HELD_RUN_STATE_ENDED
		cutShort = carillonv1.HeldRunState_HELD_RUN_STATE_CUT_SHORT
	)
	want := map[int64]carillonv1.HeldRunState{1: cutShort, 2: ended, 3: cutShort, 5: ended, 6: ended, 7: ended}
	if diff := cmp.Diff(want, ask(db)); diff != "" {
		t.Errorf("HeldRuns after a crash (-want +got):\n%s", diff)
	}
	if got := ask("another"); len(got) != 0 {
		t.Errorf("HeldRuns of another database = %v, want none", got)
	}
	// Asked again (the runner now remembers them as accepted): the same.
	resent := &runner.Run{ID: 1, DB: db, JobID: 1, Block: carillonv1.BlockStrategy_BLOCK_STRATEGY_SERIAL, ShardTotal: 1}
	if err := d.Accept(resent); !errors.Is(err, ErrDuplicateRun) {
		t.Errorf("run 1, cut short, sent again: %v, want ErrDuplicateRun (it could run twice)", err)
	}
	if diff := cmp.Diff(want, ask(db)); diff != "" {
		t.Errorf("HeldRuns asked again (-want +got):\n%s", diff)
	}
}
