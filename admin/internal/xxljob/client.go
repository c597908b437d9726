package xxljob

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync/atomic"

	"connectrpc.com/connect"

	carillonv1 "github.com/carillonhq/carillon/proto/carillon/v1"
	"github.com/carillonhq/carillon/proto/carillon/v1/carillonv1connect"
)

// Credentials are what a call to an xxl-job executor carries: the access
// token (XXL-JOB-ACCESS-TOKEN) and the app name (XXL-JOB-APPNAME, which
// 3.5 executors require and earlier ones ignore).
type Credentials struct {
	Token   string
	AppName string
}

// maxReplyBytes bounds a reply read from an executor (a log page is the
// largest).
const maxReplyBytes = 8 << 20

// Client calls one xxl-job executor. It implements
// carillonv1connect.ExecutorServiceClient, so the trigger drives xxl-job
// executors as it drives Carillon's; RunBatch and HeldRuns answer
// unimplemented, as an executor that cannot answer them does.
//
// Run posts to /run; once the executor answers that /run is unknown (a
// 3.5 executor, which serves /trigger), the Client posts to /trigger from
// then on. A Client is safe for concurrent use.
type Client struct {
	http    *http.Client
	base    string
	creds   func(ctx context.Context) Credentials
	trigger atomic.Bool // the executor serves /trigger, not /run
}

var _ carillonv1connect.ExecutorServiceClient = (*Client)(nil)

// NewClient returns a Client for the executor at address (its registered
// URL, e.g. http://10.0.0.5:9999/), calling it with hc and the credentials
// creds returns for each call's context.
func NewClient(hc *http.Client, address string, creds func(ctx context.Context) Credentials) *Client {
	return &Client{http: hc, base: strings.TrimRight(address, "/"), creds: creds}
}

// errUnknownPath says the executor does not serve the path called.
var errUnknownPath = errors.New("xxljob: the executor does not serve this path")

// call posts body as JSON to path and returns the reply's payload. A reply
// with a code other than 200 is an error carrying its msg.
func (c *Client) call(ctx context.Context, path string, body any) (json.RawMessage, error) {
	var buf []byte
	if body != nil {
		var err error
		if buf, err = json.Marshal(body); err != nil {
			return nil, connect.NewError(connect.CodeInternal, fmt.Errorf("encode %s: %w", path, err))
		}
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.base+path, bytes.NewReader(buf))
	if err != nil {
		return nil, connect.NewError(connect.CodeInvalidArgument, fmt.Errorf("executor address %q: %w", c.base, err))
	}
	req.Header.Set("Content-Type", "application/json;charset=UTF-8")
	creds := c.creds(ctx)
	req.Header.Set(TokenHeader, creds.Token)
	if creds.AppName != "" {
		req.Header.Set(AppNameHeader, creds.AppName)
	}
	res, err := c.http.Do(req)
	if err != nil {
		return nil, connect.NewError(connectCode(ctx), fmt.Errorf("post %s: %w", path, err))
	}
	defer res.Body.Close()
	data, err := io.ReadAll(io.LimitReader(res.Body, maxReplyBytes))
	if err != nil {
		return nil, connect.NewError(connectCode(ctx), fmt.Errorf("read the reply of %s: %w", path, err))
	}
	if res.StatusCode == http.StatusNotFound {
		return nil, connect.NewError(connect.CodeUnimplemented, fmt.Errorf("%w: %s: HTTP %s", errUnknownPath, path, res.Status))
	}
	if res.StatusCode != http.StatusOK {
		return nil, connect.NewError(connect.CodeUnavailable, fmt.Errorf("%s: HTTP %s: %.200s", path, res.Status, data))
	}
	var r reply
	if err := json.Unmarshal(data, &r); err != nil {
		return nil, connect.NewError(connect.CodeUnavailable, fmt.Errorf("%s: not an xxl-job reply: %.200s", path, data))
	}
	if r.Code != codeSuccess {
		msg := r.message()
		if strings.Contains(msg, "uri-mapping") && strings.Contains(msg, "not found") {
			return nil, connect.NewError(connect.CodeUnimplemented, fmt.Errorf("%w: %s: %s", errUnknownPath, path, msg))
		}
		return nil, connect.NewError(replyCode(msg), fmt.Errorf("%s: code %d: %s", path, r.Code, msg))
	}
	return r.payload(), nil
}

// connectCode is the code of a call that failed in transport: the
// context's end, or unavailable.
func connectCode(ctx context.Context) connect.Code {
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return connect.CodeDeadlineExceeded
	}
	if ctx.Err() != nil {
		return connect.CodeCanceled
	}
	return connect.CodeUnavailable
}

// replyCode is the Connect code of an executor's refusal, by its words.
func replyCode(msg string) connect.Code {
	lower := strings.ToLower(msg)
	switch {
	case strings.Contains(lower, "access token") || strings.Contains(lower, "accesstoken"):
		return connect.CodeUnauthenticated
	case strings.Contains(lower, "not found") || strings.Contains(lower, "not registered"):
		return connect.CodeNotFound
	case strings.Contains(lower, "repeat trigger"):
		return connect.CodeAlreadyExists // it holds the run (its logId) already
	case strings.Contains(lower, "discard later") || strings.Contains(lower, "running"):
		return connect.CodeAborted
	default:
		return connect.CodeFailedPrecondition
	}
}

// Beat calls /beat: any 200 reply means alive.
func (c *Client) Beat(ctx context.Context, _ *carillonv1.BeatRequest) (*carillonv1.BeatResponse, error) {
	if _, err := c.call(ctx, "/beat", nil); err != nil {
		return nil, err
	}
	return &carillonv1.BeatResponse{}, nil
}

// IdleBeat calls /idleBeat: a 200 reply means idle, a 500 busy (its msg
// the reason).
func (c *Client) IdleBeat(ctx context.Context, req *carillonv1.IdleBeatRequest) (*carillonv1.IdleBeatResponse, error) {
	_, err := c.call(ctx, "/idleBeat", jobParam{JobID: req.JobId})
	var ce *connect.Error
	if errors.As(err, &ce) && ce.Code() != connect.CodeUnavailable && ce.Code() != connect.CodeUnimplemented &&
		ce.Code() != connect.CodeUnauthenticated && ce.Code() != connect.CodeDeadlineExceeded && ce.Code() != connect.CodeCanceled {
		return &carillonv1.IdleBeatResponse{Idle: false, Reason: ce.Message()}, nil
	}
	if err != nil {
		return nil, err
	}
	return &carillonv1.IdleBeatResponse{Idle: true}, nil
}

// triggerParamOf returns the TriggerParam that sends req: logId is the
// run id, logDateTime its scheduled time (the date its log is filed
// under).
func triggerParamOf(req *carillonv1.RunRequest) triggerParam {
	p := triggerParam{
		JobID: req.JobId, ExecutorHandler: req.Handler, ExecutorParams: req.Param,
		ExecutorBlockStrategy: blockStrategies[req.BlockStrategy], ExecutorTimeout: req.TimeoutSeconds,
		LogID: req.RunId, LogDateTime: req.ScheduledAt.AsTime().UnixMilli(), GlueType: glueBean,
		BroadcastIndex: req.ShardIndex, BroadcastTotal: max(req.ShardTotal, 1),
	}
	if s := req.Script; s != nil {
		p.GlueType, p.GlueSource = GlueType(s.Type), s.Source
		if s.UpdatedAt != nil {
			p.GlueUpdatetime = s.UpdatedAt.AsTime().UnixMilli()
		}
	}
	return p
}

// Run posts the run's TriggerParam to /run, or /trigger for an executor
// that serves that instead (3.5).
func (c *Client) Run(ctx context.Context, req *carillonv1.RunRequest) (*carillonv1.RunResponse, error) {
	p := triggerParamOf(req)
	if !c.trigger.Load() {
		_, err := c.call(ctx, "/run", p)
		if !errors.Is(err, errUnknownPath) {
			if err != nil {
				return nil, err
			}
			return &carillonv1.RunResponse{}, nil
		}
		c.trigger.Store(true)
	}
	if _, err := c.call(ctx, "/trigger", p); err != nil {
		return nil, err
	}
	return &carillonv1.RunResponse{}, nil
}

// RunBatch is unimplemented: xxl-job executors take one run per call.
func (c *Client) RunBatch(context.Context, *carillonv1.RunBatchRequest) (*carillonv1.RunBatchResponse, error) {
	return nil, connect.NewError(connect.CodeUnimplemented, errors.New("xxl-job executors take one run per call"))
}

// Kill posts the job to /kill: xxl-job executors stop every running and
// queued run of the job, whatever run the request names. A request to
// cancel a run only before it starts (before_start) is unimplemented:
// /kill would stop the job's running run too.
func (c *Client) Kill(ctx context.Context, req *carillonv1.KillRequest) (*carillonv1.KillResponse, error) {
	if req.BeforeStart {
		return nil, connect.NewError(connect.CodeUnimplemented, errors.New("xxl-job executors cannot cancel a run before it starts"))
	}
	if _, err := c.call(ctx, "/kill", jobParam{JobID: req.JobId}); err != nil {
		return nil, err
	}
	return &carillonv1.KillResponse{}, nil
}

// ReadLog posts to /log, with the run's scheduled time as its log date.
func (c *Client) ReadLog(ctx context.Context, req *carillonv1.ReadLogRequest) (*carillonv1.ReadLogResponse, error) {
	from := max(req.FromLine, 1)
	at := req.ScheduledAt.AsTime().UnixMilli()
	payload, err := c.call(ctx, "/log", logParam{LogDateTim: at, LogDateTime: at, LogID: req.RunId, FromLineNum: from})
	if err != nil {
		return nil, err
	}
	var page logResult
	if len(payload) > 0 {
		if err := json.Unmarshal(payload, &page); err != nil {
			return nil, connect.NewError(connect.CodeUnavailable, fmt.Errorf("/log: not a log page: %.200s", payload))
		}
	}
	res := &carillonv1.ReadLogResponse{FromLine: from, ToLine: page.ToLineNum, Content: page.LogContent, End: page.IsEnd}
	if res.ToLine < from {
		res.ToLine = from - 1 // nothing new: xxl-job says 0
	}
	return res, nil
}

// HeldRuns is unimplemented: xxl-job executors cannot say which runs they
// hold.
func (c *Client) HeldRuns(context.Context, *carillonv1.HeldRunsRequest) (*carillonv1.HeldRunsResponse, error) {
	return nil, connect.NewError(connect.CodeUnimplemented, errors.New("xxl-job executors cannot say which runs they hold"))
}
