package server

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"time"
	"unicode/utf8"

	"connectrpc.com/connect"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/carillonhq/carillon/admin/internal/store"
	"github.com/carillonhq/carillon/admin/internal/trigger"
	carillonv1 "github.com/carillonhq/carillon/proto/carillon/v1"
)

// registryService implements carillonv1connect.RegistryServiceHandler.
type registryService struct{ *Server }

// checkURL requires an absolute http or https URL.
func checkURL(field, s string) error {
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return invalid(field, "must be an http:// or https:// URL such as http://10.0.0.5:9999, got %q", s)
	}
	return nil
}

func (s registryService) Register(ctx context.Context, req *carillonv1.RegisterRequest) (*carillonv1.RegisterResponse, error) {
	if err := checkURL("address", req.Address); err != nil {
		return nil, err
	}
	if err := s.checkApp(ctx, req.AppName); err != nil {
		return nil, err
	}
	if err := s.checkProtocol(ctx, req.AppName, req.Protocol); err != nil {
		return nil, err
	}
	previous, err := s.cfg.Store.Registry.Register(ctx, req.AppName, req.Address, req.InstanceId, store.CapabilitiesOf(req.Capabilities), s.cfg.NowFunc())
	if err != nil {
		return nil, s.toConnect(err)
	}
	s.cfg.Trigger.Gateway.UseCodec(req.Address, req.Codec)
	s.cfg.Trigger.Registered(req.Address, req.InstanceId, previous)
	s.cfg.Trigger.Rescuer.Heard(heartbeat(req))
	s.warnUnclaimed(ctx, req.AppName, req.Address)
	return &carillonv1.RegisterResponse{AdminTime: timestamppb.New(s.cfg.NowFunc()), AdminId: s.cfg.Store.AdminID()}, nil
}

// checkProtocol refuses an executor speaking protocol p into the group of
// app when that group speaks another: the admin could not call it. An app
// without a group yet is taken as it is.
func (s registryService) checkProtocol(ctx context.Context, app string, p carillonv1.ExecutorProtocol) error {
	g, err := s.cfg.Store.Groups.ByApp(ctx, app)
	if errors.Is(err, store.ErrNotFound) {
		return nil
	}
	if err != nil {
		return s.toConnect(err)
	}
	if protocolOf(g.ExecutorProtocol) != protocolOf(p) {
		return connect.NewError(connect.CodeFailedPrecondition, fmt.Errorf(
			"group %q speaks %s, and this executor %s: the admin could not call it; change the group's executor_protocol or the executor",
			app, protocolOf(g.ExecutorProtocol), protocolOf(p)))
	}
	return nil
}

// protocolOf is p with UNSPECIFIED taken as CARILLON.
func protocolOf(p carillonv1.ExecutorProtocol) carillonv1.ExecutorProtocol {
	if p == carillonv1.ExecutorProtocol_EXECUTOR_PROTOCOL_UNSPECIFIED {
		return carillonv1.ExecutorProtocol_EXECUTOR_PROTOCOL_CARILLON
	}
	return p
}

// warnUnclaimed logs, once per app name and admin process, an executor
// registering under an app name no group has: it gets no runs.
func (s registryService) warnUnclaimed(ctx context.Context, app, address string) {
	if _, warned := s.unclaimed.Load(app); warned {
		return
	}
	claimed, err := s.cfg.Store.Registry.AppClaimed(ctx, app)
	if err != nil || claimed {
		return // a read that failed is tried again at the next heartbeat
	}
	if _, warned := s.unclaimed.LoadOrStore(app, true); !warned {
		s.cfg.Logger.Warn("an executor registered under an app name no group has: it gets no runs until a group with this app name is created "+
			"(carillon group create APP); carillon group list shows such app names", "app", app, "address", address)
	}
}

func (s registryService) Deregister(ctx context.Context, req *carillonv1.DeregisterRequest) (*carillonv1.DeregisterResponse, error) {
	if err := s.checkApp(ctx, req.AppName); err != nil {
		return nil, err
	}
	if err := s.cfg.Store.Registry.Deregister(ctx, req.AppName, req.Address); err != nil {
		return nil, s.toConnect(err)
	}
	return &carillonv1.DeregisterResponse{}, nil
}

// ReportResults judges each result alone: it settles the good ones and
// refuses each malformed one in its outcome, so that one bad result does not
// hold back its batch. The call fails only when the good ones cannot be
// settled.
func (s registryService) ReportResults(ctx context.Context, req *carillonv1.ReportResultsRequest) (*carillonv1.ReportResultsResponse, error) {
	res := &carillonv1.ReportResultsResponse{Outcomes: make([]*carillonv1.ResultOutcome, len(req.Results)), AdminId: s.cfg.Store.AdminID()}
	results := make([]store.Result, 0, len(req.Results))
	ours, foreign := s.cfg.Store.DatabaseID(), 0
	var refused []string // the reasons
	for i, r := range req.Results {
		res.Outcomes[i] = &carillonv1.ResultOutcome{RunId: r.RunId}
		if ce := new(connect.Error); errors.As(checkResult(fmt.Sprintf("results[%d]", i), r), &ce) {
			res.Outcomes[i].Code, res.Outcomes[i].Message = ce.Code().String(), ce.Message()
			refused = append(refused, ce.Message())
			continue
		}
		if r.DatabaseId != "" && r.DatabaseId != ours {
			// A run of another database (the executor ran against an
			// older one): its run ID names some other run here.
			foreign++
			continue
		}
		// Never in the future: the store takes it as at least the run's send.
		finished := fromTS(r.FinishedAt)
		if now := s.cfg.NowFunc(); finished.IsZero() || finished.After(now) {
			finished = now
		}
		results = append(results, store.Result{RunID: r.RunId, Status: r.Status, Message: truncate(r.Message, maxMessage), FinishedAt: finished,
			StartedAt: fromTS(r.StartedAt), Outputs: r.Outputs})
	}
	results, refused, err := s.checkRuns(ctx, req.InstanceId, results, req.Results, res.Outcomes, refused)
	if err != nil {
		return nil, s.toConnect(err) // the executor retries the batch
	}
	if foreign > 0 {
		s.cfg.Logger.Warn("results of runs of another database acknowledged and ignored", "results", foreign, "database_id", ours)
	}
	if len(refused) > 0 {
		s.cfg.Logger.Warn("malformed results refused, the others of their batch taken", "results", len(refused), "first", refused[0])
	}
	if len(results) == 0 {
		return res, nil
	}
	if err := s.cfg.Trigger.Completer.Settle(ctx, results); err != nil { // wakes the scheduler if a FIX_DELAY job is due again
		return nil, s.toConnect(err)
	}
	return res, nil
}

// checkRuns takes out of results those the calling executor may not
// report, refusing each in its outcome (permission_denied):
//   - a run of a group its token may not act for: with its own token a
//     group's executors report only its runs, and the global token reports
//     no run of a group with its own;
//   - a run sent to another executor: where executors registered at the
//     address the run was sent to (its held dispatch's, else its recorded
//     executor or route), the caller's instance (ReportResultsRequest.
//     instance_id) must be one of theirs, and must be given where one of
//     them declared CAPABILITY_INSTANCE_RESULTS. A run not known to be
//     sent anywhere, or sent where no executor process registered (a
//     MANUAL address), or whose executor registered no instance, takes the
//     result: nothing tells its executor apart.
func (s registryService) checkRuns(ctx context.Context, instance string, results []store.Result, reqs []*carillonv1.RunResult,
	outcomes []*carillonv1.ResultOutcome, refused []string) ([]store.Result, []string, error) {
	if len(results) == 0 {
		return results, refused, nil
	}
	// The runs are read only for what the Completer does not hold: the
	// address of a run whose dispatch record is stored already, and the
	// groups where tokens are per group. Most results come while their
	// dispatch is held, and most admins have one token.
	e, separate := executorOf(ctx), s.tokens().Separate()
	sentTo := make(map[int64]string, len(results))
	var unknown []int64
	for _, r := range results {
		a := s.cfg.Trigger.Completer.SentTo(r.RunID)
		sentTo[r.RunID] = a
		if a == "" || separate {
			unknown = append(unknown, r.RunID)
		}
	}
	var runs map[int64]store.ResultRun
	if len(unknown) > 0 {
		var err error
		if runs, err = s.cfg.Store.Runs.Results(ctx, unknown); err != nil {
			return nil, nil, err
		}
	}
	var addrs []string
	seen := map[string]bool{}
	for _, r := range results {
		a := cmp.Or(sentTo[r.RunID], runs[r.RunID].Address)
		sentTo[r.RunID] = a
		if a != "" && !seen[a] {
			seen[a] = true
			addrs = append(addrs, a)
		}
	}
	registered, err := s.registeredAt(ctx, addrs, false)
	if err != nil {
		return nil, nil, err
	}
	if slices.ContainsFunc(results, func(r store.Result) bool {
		return otherExecutor(instance, sentTo[r.RunID], registered[sentTo[r.RunID]]) != ""
	}) {
		// Refused on what instanceCache held: refused only on a fresh read.
		if registered, err = s.registeredAt(ctx, addrs, true); err != nil {
			return nil, nil, err
		}
	}
	why := map[int64]string{} // the runs refused, and why
	kept := results[:0]
	for _, r := range results {
		if run, ok := runs[r.RunID]; ok && separate && !s.tokens().MayActFor(e, run.GroupID) {
			why[r.RunID] = "is of a group this access token may not report for"
			continue
		}
		if w := otherExecutor(instance, sentTo[r.RunID], registered[sentTo[r.RunID]]); w != "" {
			why[r.RunID] = w
			continue
		}
		kept = append(kept, r)
	}
	for i, r := range reqs {
		if w, ok := why[r.RunId]; ok && outcomes[i].Code == "" {
			msg := fmt.Sprintf("results[%d]: run %d %s", i, r.RunId, w)
			outcomes[i].Code, outcomes[i].Message = connect.CodePermissionDenied.String(), msg
			refused = append(refused, msg)
		}
	}
	return kept, refused, nil
}

// registeredAt returns the executor processes registered at each of
// addrs, through the server's instanceCache (fresh: read again).
func (s registryService) registeredAt(ctx context.Context, addrs []string, fresh bool) (map[string][]store.Instance, error) {
	return s.instances.registeredAt(ctx, addrs, s.cfg.Store.RoutingVersion(), time.Now(), fresh, s.cfg.Store.Registry.RegisteredAt)
}

// otherExecutor says why a result from executor process instance ("" when
// the call did not say) is not of the executor its run was sent to, at
// address, where the instances registered are there; "" when it may be.
func otherExecutor(instance, address string, there []store.Instance) string {
	if address == "" || len(there) == 0 {
		return ""
	}
	if instance == "" {
		for _, in := range there {
			if in.Capabilities.Has(carillonv1.Capability_CAPABILITY_INSTANCE_RESULTS) {
				return fmt.Sprintf("was sent to %s, whose executor reports with its instance_id; this call carries none", address)
			}
		}
		return ""
	}
	known := false
	for _, in := range there {
		if in.InstanceID == instance {
			return ""
		}
		known = known || in.InstanceID != ""
	}
	if !known {
		return "" // the executor there registered no instance: nothing to compare
	}
	return fmt.Sprintf("was sent to %s, where another executor process is registered: only the executor a run was sent to reports its result "+
		"(an executor that has just restarted is taken once it has registered)", address)
}

// checkResult checks one result of a batch, field naming it in the batch.
func checkResult(field string, r *carillonv1.RunResult) error {
	switch r.Status {
	case carillonv1.RunStatus_RUN_STATUS_SUCCEEDED, carillonv1.RunStatus_RUN_STATUS_FAILED,
		carillonv1.RunStatus_RUN_STATUS_TIMED_OUT, carillonv1.RunStatus_RUN_STATUS_KILLED,
		carillonv1.RunStatus_RUN_STATUS_SKIPPED: // dropped before its start by a KillRequest.before_start
	default:
		return invalid(field+".status", "must be a final status (SUCCEEDED, FAILED, TIMED_OUT, KILLED or SKIPPED), got %s", r.Status)
	}
	if r.RunId <= 0 {
		return invalid(field+".run_id", "must be positive, got %d", r.RunId)
	}
	if _, ok := r.Outputs[""]; ok {
		return invalid(field+".outputs", "keys must not be empty")
	}
	if n := store.OutputsSize(r.Outputs); n > store.MaxOutputsSize {
		return invalid(field+".outputs", "at most %d bytes of keys and values, got %d", store.MaxOutputsSize, n)
	}
	return nil
}

// maxMessage bounds a stored result message (xxl-job keeps 15,000 characters).
const maxMessage = 16 << 10

// truncate cuts s to at most n bytes on a rune boundary.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}

// heartbeat is what the trigger hears of a registration besides what the
// store keeps: its clock's offset from the admin's.
func heartbeat(req *carillonv1.RegisterRequest) trigger.Heartbeat {
	hb := trigger.Heartbeat{Address: req.Address}
	if req.ClockOffset != nil && req.ClockRoundTrip != nil {
		hb.ClockMeasured, hb.ClockOffset, hb.ClockRoundTrip = true, req.ClockOffset.AsDuration(), req.ClockRoundTrip.AsDuration()
	}
	return hb
}
