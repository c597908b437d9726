package trigger

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"sync"

	"connectrpc.com/connect"

	carillonv1 "github.com/carillonhq/carillon/proto/carillon/v1"
	"github.com/carillonhq/carillon/proto/carillon/v1/carillonv1connect"
)

// The codec of the calls to an executor (RegisterRequest.codec): protobuf
// (application/proto) unless the executor said "json" when it registered,
// or answered a protobuf call with HTTP 415 Unsupported Media Type, as an
// executor written with nothing but an HTTP server and a JSON library does
// (examples/python-executor). Then its calls use protobuf's JSON mapping
// (application/json), remembered by address until it registers again.

// jsonAddrs are the addresses of the executors that speak JSON only.
type jsonAddrs struct {
	mu    sync.Mutex
	addrs map[string]bool
}

func (j *jsonAddrs) set(address string, json bool) {
	j.mu.Lock()
	defer j.mu.Unlock()
	if !json {
		delete(j.addrs, address)
		return
	}
	if j.addrs == nil {
		j.addrs = map[string]bool{}
	}
	j.addrs[address] = true
}

func (j *jsonAddrs) has(address string) bool {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.addrs[address]
}

// Registered codec: see RegisterRequest.codec.
const codecJSON = "json"

// UseCodec notes the codec the executor at address asked for when it
// registered (RegisterRequest.codec): "json", or "proto" or "" for
// protobuf.
func (g *Gateway) UseCodec(address, codec string) {
	g.json.set(address, codec == codecJSON)
}

// codecClient is the client of one Carillon executor: it calls with
// protobuf, or with JSON where the executor speaks only that, and falls
// back to JSON when a protobuf call is answered 415.
type codecClient struct {
	address string
	json    *jsonAddrs
	proto   carillonv1connect.ExecutorServiceClient
	jsonc   carillonv1connect.ExecutorServiceClient
}

// newCodecClient returns the client of the executor at address, its calls
// made with opts.
func (g *Gateway) newCodecClient(address string, opts ...connect.ClientOption) *codecClient {
	return &codecClient{
		address: address, json: &g.json,
		proto: carillonv1connect.NewExecutorServiceClient(g.http, address, opts...),
		jsonc: carillonv1connect.NewExecutorServiceClient(g.http, address, append(opts, connect.WithProtoJSON())...),
	}
}

// viaCodec makes the call with the executor's codec: with protobuf first
// unless it is known to speak JSON only, then, on a 415 (the executor read
// nothing of the request), with JSON, remembered.
func viaCodec[Req, Res any](ctx context.Context, c *codecClient, req *Req,
	call func(carillonv1connect.ExecutorServiceClient, context.Context, *Req) (*Res, error)) (*Res, error) {
	if c.json.has(c.address) {
		return call(c.jsonc, ctx, req)
	}
	res, err := call(c.proto, ctx, req)
	if unsupportedMediaType(err) {
		c.json.set(c.address, true)
		return call(c.jsonc, ctx, req)
	}
	return res, err
}

// unsupportedMediaType says whether err is an HTTP 415 answer with no
// Connect error in its body: connect reports those as CodeUnknown with
// the HTTP status as the message.
func unsupportedMediaType(err error) bool {
	var ce *connect.Error
	return errors.As(err, &ce) && ce.Code() == connect.CodeUnknown &&
		strings.HasPrefix(ce.Message(), "415 "+http.StatusText(http.StatusUnsupportedMediaType))
}

func (c *codecClient) Beat(ctx context.Context, req *carillonv1.BeatRequest) (*carillonv1.BeatResponse, error) {
	return viaCodec(ctx, c, req, carillonv1connect.ExecutorServiceClient.Beat)
}

func (c *codecClient) IdleBeat(ctx context.Context, req *carillonv1.IdleBeatRequest) (*carillonv1.IdleBeatResponse, error) {
	return viaCodec(ctx, c, req, carillonv1connect.ExecutorServiceClient.IdleBeat)
}

func (c *codecClient) Run(ctx context.Context, req *carillonv1.RunRequest) (*carillonv1.RunResponse, error) {
	return viaCodec(ctx, c, req, carillonv1connect.ExecutorServiceClient.Run)
}

func (c *codecClient) RunBatch(ctx context.Context, req *carillonv1.RunBatchRequest) (*carillonv1.RunBatchResponse, error) {
	return viaCodec(ctx, c, req, carillonv1connect.ExecutorServiceClient.RunBatch)
}

func (c *codecClient) Kill(ctx context.Context, req *carillonv1.KillRequest) (*carillonv1.KillResponse, error) {
	return viaCodec(ctx, c, req, carillonv1connect.ExecutorServiceClient.Kill)
}

func (c *codecClient) ReadLog(ctx context.Context, req *carillonv1.ReadLogRequest) (*carillonv1.ReadLogResponse, error) {
	return viaCodec(ctx, c, req, carillonv1connect.ExecutorServiceClient.ReadLog)
}

func (c *codecClient) HeldRuns(ctx context.Context, req *carillonv1.HeldRunsRequest) (*carillonv1.HeldRunsResponse, error) {
	return viaCodec(ctx, c, req, carillonv1connect.ExecutorServiceClient.HeldRuns)
}
