package sdk

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"time"

	"connectrpc.com/connect"

	carillonv1 "github.com/carillonhq/carillon/proto/carillon/v1"
	"github.com/carillonhq/carillon/proto/carillon/v1/carillonv1connect"
	"github.com/carillonhq/carillon/sdk/internal/report"
	"github.com/carillonhq/carillon/sdk/internal/runner"
)

// service is the ExecutorService the admin calls. It is the only place
// that turns the SDK's errors into Connect codes.
type service struct {
	d          *runner.Dispatcher
	lookup     func(name string) (Handler, bool)
	scriptDir  string
	instanceID string                // this Serve's, for HeldRuns
	spooled    func(report.Key) bool // whether a run's result waits in the spool
	sentBy     func(adminID string)  // notes the admin a run came from (admins.sentBy)
}

var _ carillonv1connect.ExecutorServiceHandler = (*service)(nil)

// errInvalidRun wraps what is wrong with a RunRequest.
var errInvalidRun = errors.New("sdk: invalid run request")

// Beat answers OK: the executor is alive.
func (s *service) Beat(context.Context, *carillonv1.BeatRequest) (*carillonv1.BeatResponse, error) {
	return &carillonv1.BeatResponse{}, nil
}

// IdleBeat says whether the job has running or queued runs here.
func (s *service) IdleBeat(_ context.Context, req *carillonv1.IdleBeatRequest) (*carillonv1.IdleBeatResponse, error) {
	idle, reason := s.d.Idle(req.GetJobId())
	return &carillonv1.IdleBeatResponse{Idle: idle, Reason: reason}, nil
}

// Run accepts one run.
func (s *service) Run(_ context.Context, req *carillonv1.RunRequest) (*carillonv1.RunResponse, error) {
	r, err := s.newRun(req)
	if err != nil {
		return nil, connectError(err)
	}
	if err := s.d.Accept(r); err != nil {
		return nil, connectError(err)
	}
	return &carillonv1.RunResponse{}, nil
}

// RunBatch accepts several runs, each as Run would, all at once.
func (s *service) RunBatch(_ context.Context, req *carillonv1.RunBatchRequest) (*carillonv1.RunBatchResponse, error) {
	res := &carillonv1.RunBatchResponse{Outcomes: make([]*carillonv1.RunOutcome, len(req.GetRuns()))}
	runs := make([]*runner.Run, 0, len(req.GetRuns()))
	at := make([]int, 0, len(req.GetRuns())) // outcome index of each of runs
	for i, rr := range req.GetRuns() {
		res.Outcomes[i] = &carillonv1.RunOutcome{RunId: rr.GetRunId()}
		r, err := s.newRun(rr)
		if err != nil {
			setOutcome(res.Outcomes[i], err)
			continue
		}
		runs, at = append(runs, r), append(at, i)
	}
	for j, err := range s.d.AcceptAll(runs) {
		if err != nil {
			setOutcome(res.Outcomes[at[j]], err)
		}
	}
	return res, nil
}

// setOutcome records why a run of a batch was refused, as Run's error
// would say it.
func setOutcome(out *carillonv1.RunOutcome, err error) {
	out.Code, out.Message = connect.CodeInternal.String(), err.Error()
	var ce *connect.Error
	if errors.As(connectError(err), &ce) {
		out.Code, out.Message = ce.Code().String(), ce.Message()
	}
}

// Kill stops one run, when the request names it (run_id and database_id),
// or else every running, queued and waiting run of the job. With
// before_start it drops the named run only if it has not started (with
// replace, silently: it is to be sent again).
func (s *service) Kill(_ context.Context, req *carillonv1.KillRequest) (*carillonv1.KillResponse, error) {
	switch {
	case req.GetRunId() < 0:
		return nil, connect.NewError(connect.CodeInvalidArgument, fmt.Errorf("%w: run_id must not be negative", errInvalidRun))
	case req.GetRunId() > 0 && req.GetBeforeStart():
		ok := s.d.CancelBeforeStart(report.Key{DB: req.GetDatabaseId(), ID: req.GetRunId()}, req.GetJobId(), req.GetReason(), req.GetReplace())
		return &carillonv1.KillResponse{Cancelled: ok}, nil
	case req.GetRunId() > 0:
		s.d.KillRun(report.Key{DB: req.GetDatabaseId(), ID: req.GetRunId()}, req.GetJobId())
	default:
		s.d.Kill(req.GetJobId())
	}
	return &carillonv1.KillResponse{}, nil
}

// ReadLog returns one page of a run's log, of the run of that id in the
// request's database: a run of the same id in another database is not
// looked at.
func (s *service) ReadLog(_ context.Context, req *carillonv1.ReadLogRequest) (*carillonv1.ReadLogResponse, error) {
	if req.GetRunId() <= 0 {
		return nil, connect.NewError(connect.CodeInvalidArgument, fmt.Errorf("%w: run_id must be positive", errInvalidRun))
	}
	if req.GetFromLine() < 0 {
		return nil, connect.NewError(connect.CodeInvalidArgument, fmt.Errorf("%w: from_line must not be negative", errInvalidRun))
	}
	page, err := s.d.ReadLog(report.Key{DB: req.GetDatabaseId(), ID: req.GetRunId()}, int(req.GetFromLine()))
	if err != nil {
		return nil, connectError(err)
	}
	return &carillonv1.ReadLogResponse{
		FromLine: int32(page.FromLine), //nolint:gosec // bounded: digits, and line numbers of one log
		ToLine:   int32(page.ToLine),   //nolint:gosec // bounded: digits, and line numbers of one log
		Content:  page.Content,
		End:      page.End,
	}, nil
}

// newRun checks a RunRequest and resolves its handler.
func (s *service) newRun(req *carillonv1.RunRequest) (*runner.Run, error) {
	invalid := func(format string, args ...any) error {
		return fmt.Errorf("%w: %s", errInvalidRun, fmt.Sprintf(format, args...))
	}
	switch {
	case req.GetRunId() <= 0:
		return nil, invalid("run_id must be positive")
	case req.GetJobId() <= 0:
		return nil, invalid("job_id must be positive")
	case req.GetTimeoutSeconds() < 0:
		return nil, invalid("timeout_seconds must not be negative (0 means no timeout)")
	case req.GetShardTotal() < 0:
		return nil, invalid("shard_total must not be negative")
	}
	total := max(int(req.GetShardTotal()), 1)
	if i := int(req.GetShardIndex()); i < 0 || i >= total {
		return nil, invalid("shard_index %d must be in [0, %d)", i, total)
	}
	if _, ok := carillonv1.BlockStrategy_name[int32(req.GetBlockStrategy())]; !ok {
		return nil, invalid("unknown block_strategy %d", req.GetBlockStrategy())
	}
	r := &runner.Run{
		ID:         req.GetRunId(),
		DB:         req.GetDatabaseId(),
		JobID:      req.GetJobId(),
		Name:       req.GetHandler(),
		Param:      req.GetParam(),
		Block:      req.GetBlockStrategy(),
		Timeout:    time.Duration(req.GetTimeoutSeconds()) * time.Second,
		ShardIndex: int(req.GetShardIndex()),
		ShardTotal: total,
		Attempt:    int(req.GetAttempt()),
		AdminID:    req.GetAdminId(),
	}
	if s.sentBy != nil {
		s.sentBy(r.AdminID)
	}
	if tc := req.GetTraceContext(); len(tc) > 0 {
		r.TraceContext = tc
	}
	if in := req.GetInputs(); len(in) > 0 {
		r.Inputs = in
	}
	if req.GetBlockStrategy() == carillonv1.BlockStrategy_BLOCK_STRATEGY_UNSPECIFIED {
		r.Block = carillonv1.BlockStrategy_BLOCK_STRATEGY_SERIAL
	}
	if req.GetScheduledAt() != nil {
		r.ScheduledAt = req.GetScheduledAt().AsTime()
	}
	if req.GetDueAt() != nil {
		r.DueAt = req.GetDueAt().AsTime()
		if ahead := r.DueAt.Sub(s.d.NowFunc()); ahead > runner.MaxDueAhead {
			return nil, invalid("due_at is %s ahead of this executor's clock, more than %s", ahead.Round(time.Millisecond), runner.MaxDueAhead)
		}
	}
	if sc := req.GetScript(); sc != nil {
		h, err := newScriptHandler(sc.GetType(), sc.GetSource(), s.scriptDir)
		if err != nil {
			return nil, invalid("script: %v", err)
		}
		r.Handler, r.Script, r.What = h, true, scriptTypeName(h.typ)+" script"
		return r, nil
	}
	if r.Name == "" {
		return nil, invalid("handler is required (or a script)")
	}
	h, ok := s.lookup(r.Name)
	if !ok {
		return nil, fmt.Errorf("%w %q: no handler is registered under that name on this executor", ErrUnknownHandler, r.Name)
	}
	r.Handler, r.What = h, fmt.Sprintf("handler %q", r.Name)
	return r, nil
}

// connectError maps the SDK's errors to Connect codes.
func connectError(err error) error {
	code := connect.CodeInternal
	switch {
	case errors.Is(err, errInvalidRun):
		code = connect.CodeInvalidArgument
	case errors.Is(err, ErrUnknownHandler):
		code = connect.CodeNotFound
	case errors.Is(err, ErrDiscarded):
		code = connect.CodeResourceExhausted
	case errors.Is(err, ErrDuplicateRun):
		code = connect.CodeAlreadyExists
	case errors.Is(err, ErrShuttingDown):
		code = connect.CodeUnavailable
	case errors.Is(err, fs.ErrNotExist):
		code = connect.CodeNotFound
		err = fmt.Errorf("sdk: no log for this run on this executor: %w", err)
	}
	return connect.NewError(code, err)
}

// HeldRuns says which of the given runs of the request's database this
// executor holds: ACTIVE while queued or running here; ENDED once ended
// here, its result delivered or in the spool to be delivered; CUT_SHORT
// when an earlier process of this executor accepted it and was killed
// before it ended (its log has a file of its own without the end mark,
// and the spool has no result of it): no result will come. It lists the
// runs it remembers: those of this process (the last recentRunsMax), those
// whose logs it keeps (Config.LogRetention), and those whose results wait
// in the spool. A run it does not list was never accepted here, as far as
// it remembers (a run cut short whose log was still in memory left
// nothing); a run id that is not positive never is.
func (s *service) HeldRuns(_ context.Context, req *carillonv1.HeldRunsRequest) (*carillonv1.HeldRunsResponse, error) {
	db := req.GetDatabaseId()
	res := &carillonv1.HeldRunsResponse{InstanceId: s.instanceID}
	for i, state := range s.d.Held(db, req.GetRunIds()) {
		id := req.GetRunIds()[i]
		switch state {
		case carillonv1.HeldRunState_HELD_RUN_STATE_UNSPECIFIED, carillonv1.HeldRunState_HELD_RUN_STATE_CUT_SHORT:
			if s.spooled != nil && s.spooled(report.Key{DB: db, ID: id}) {
				state = carillonv1.HeldRunState_HELD_RUN_STATE_ENDED // its result will be delivered
			}
		}
		if state != carillonv1.HeldRunState_HELD_RUN_STATE_UNSPECIFIED {
			res.Runs = append(res.Runs, &carillonv1.HeldRun{RunId: id, State: state})
		}
	}
	return res, nil
}
