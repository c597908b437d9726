package xxljob

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"

	"connectrpc.com/connect"

	carillonv1 "github.com/carillonhq/carillon/proto/carillon/v1"
	"github.com/carillonhq/carillon/proto/carillon/v1/carillonv1connect"
)

// Paths the admin serves xxl-job executors under: /api/ (xxl-job 3.4.1 and
// later, admin context path /) and /xxl-job-admin/api/ (earlier versions'
// default context path, so their executors' admin address may keep it).
const (
	APIPath       = "/api/"
	LegacyAPIPath = "/xxl-job-admin/api/"
)

// maxBody bounds a request body: a callback of 50 results with long
// messages fits many times over.
const maxBody = 4 << 20

// Admin serves the paths xxl-job executors call on their admin:
// /api/registry, /api/registryRemove and /api/callback. Each becomes the
// RegistryService call it means (Register, Deregister, ReportResults) made
// with the request's XXL-JOB-ACCESS-TOKEN as the bearer token, through
// Registry, which should reach the admin's own RegistryService handler so
// that tokens, validation and idempotent settling are Carillon's. Replies
// are xxl-job's: {"code":200,"msg":null}, or code 500 with the words
// xxl-job's admin would use.
//
// A request whose XXL-JOB-ACCESS-TOKEN the admin takes from no one (known)
// is refused before its body is read: an unauthenticated caller costs the
// admin no reading or decoding of up to 4 MiB.
type Admin struct {
	registry carillonv1connect.RegistryServiceClient
	known    func(token string) bool
	logger   *slog.Logger
}

// NewAdmin returns an Admin that makes its RegistryService calls with hc
// to the admin at baseURL. known says whether the admin takes an access
// token from some executor ("" for none: true when the admin runs without
// a token); nil leaves every token to the RegistryService call. logger
// takes the calls it refuses (nil: slog.Default()).
func NewAdmin(hc *http.Client, baseURL string, known func(token string) bool, logger *slog.Logger) *Admin {
	if logger == nil {
		logger = slog.Default()
	}
	return &Admin{
		registry: carillonv1connect.NewRegistryServiceClient(hc, baseURL, connect.WithInterceptors(bearer{})),
		known:    known,
		logger:   logger,
	}
}

// tokenKey is the context key of the access token an xxl-job call carried.
type tokenKey struct{}

// bearer sends the token of the call's context (tokenKey) as
// "Authorization: Bearer <token>".
type bearer struct{}

func (bearer) WrapUnary(next connect.UnaryFunc) connect.UnaryFunc {
	return func(ctx context.Context, req connect.AnyRequest) (connect.AnyResponse, error) {
		if token, _ := ctx.Value(tokenKey{}).(string); token != "" {
			req.Header().Set("Authorization", "Bearer "+token)
		}
		return next(ctx, req)
	}
}

func (bearer) WrapStreamingClient(next connect.StreamingClientFunc) connect.StreamingClientFunc {
	return next
}

func (bearer) WrapStreamingHandler(next connect.StreamingHandlerFunc) connect.StreamingHandlerFunc {
	return next
}

// ServeHTTP answers one call of an xxl-job executor.
func (a *Admin) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	code, msg := a.serve(r)
	w.Header().Set("Content-Type", "application/json;charset=UTF-8")
	body := map[string]any{"code": code, "msg": nil}
	if msg != "" {
		body["msg"] = msg
	}
	_ = json.NewEncoder(w).Encode(body) //nolint:errchkjson // a map of an int and a string encodes
}

// Words of xxl-job's admin, as its executors log them.
const (
	msgMethod        = "invalid request, HttpMethod not support."
	msgURIEmpty      = "invalid request, uri-mapping empty."
	msgBodyEmpty     = "invalid request, requestBody empty."
	msgTokenClassic  = "The access token is wrong."
	msgTokenEmpty35  = "invalid request, accessToken or appname is empty."
	msgTokenWrong35  = "invalid request, accessToken or appname invalid."
	msgIllegalArg    = "Illegal Argument."
	msgURINotFoundFm = "invalid request, uri-mapping(%s) not found."
)

// serve handles one request and returns the reply's code and msg.
func (a *Admin) serve(r *http.Request) (int, string) {
	if r.Method != http.MethodPost {
		return codeFail, msgMethod
	}
	uri := r.URL.Path
	for _, p := range []string{LegacyAPIPath, APIPath} {
		if rest, ok := strings.CutPrefix(uri, p); ok {
			uri = rest
			break
		}
	}
	if strings.TrimSpace(uri) == "" {
		return codeFail, msgURIEmpty
	}
	// The token first, as xxl-job's admin checks it: a caller without a
	// right one gets nothing read.
	token, app := r.Header.Get(TokenHeader), r.Header.Get(AppNameHeader)
	v35 := app != "" // only 3.5 executors send their app name
	if v35 && token == "" {
		return codeFail, msgTokenEmpty35
	}
	if a.known != nil && !a.known(token) {
		return tokenRefused(v35)
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, maxBody+1))
	if err != nil {
		return codeFail, fmt.Sprintf("openapi invoke error: read the request: %v", err)
	}
	if len(body) > maxBody {
		return codeFail, fmt.Sprintf("openapi invoke error: the request is larger than %d bytes", maxBody)
	}
	if len(strings.TrimSpace(string(body))) == 0 {
		return codeFail, msgBodyEmpty
	}
	ctx := context.WithValue(r.Context(), tokenKey{}, token)
	var code int
	var msg string
	switch uri {
	case "registry", "registryRemove":
		code, msg = a.register(ctx, uri == "registry", body)
	case "callback":
		code, msg = a.callback(ctx, body)
	default:
		return codeFail, fmt.Sprintf(msgURINotFoundFm, uri)
	}
	if code == http.StatusUnauthorized {
		return tokenRefused(v35)
	}
	return code, msg
}

// tokenRefused is the reply to a refused token, in the words of the
// executor's version.
func tokenRefused(v35 bool) (int, string) {
	if v35 {
		return codeFail, msgTokenWrong35
	}
	return codeFail, msgTokenClassic
}

// answer turns a RegistryService error into xxl-job's reply: 401 (the
// caller words it) for a refused token, else code 500 with the reason.
func answer(err error) (int, string) {
	if err == nil {
		return codeSuccess, ""
	}
	switch connect.CodeOf(err) {
	case connect.CodeUnauthenticated, connect.CodePermissionDenied:
		return http.StatusUnauthorized, ""
	}
	var ce *connect.Error
	if errors.As(err, &ce) {
		return codeFail, ce.Message()
	}
	return codeFail, err.Error()
}

// register registers (or, with add false, removes) the executor of body
// in the XXL_JOB group of its app name.
func (a *Admin) register(ctx context.Context, add bool, body []byte) (int, string) {
	var p registryParam
	if err := json.Unmarshal(body, &p); err != nil {
		return codeFail, "openapi invoke error: " + err.Error()
	}
	if strings.TrimSpace(p.RegistryGroup) == "" || strings.TrimSpace(p.RegistryKey) == "" || strings.TrimSpace(p.RegistryValue) == "" {
		return codeFail, msgIllegalArg
	}
	if add {
		_, err := a.registry.Register(ctx, &carillonv1.RegisterRequest{
			AppName: p.RegistryKey, Address: p.RegistryValue, Protocol: carillonv1.ExecutorProtocol_EXECUTOR_PROTOCOL_XXL_JOB,
		})
		return a.replyTo(ctx, "registry", p.RegistryKey, err)
	}
	_, err := a.registry.Deregister(ctx, &carillonv1.DeregisterRequest{AppName: p.RegistryKey, Address: p.RegistryValue})
	return a.replyTo(ctx, "registryRemove", p.RegistryKey, err)
}

// replyTo logs a refused call and returns its reply.
func (a *Admin) replyTo(ctx context.Context, uri, app string, err error) (int, string) {
	if err != nil {
		a.logger.WarnContext(ctx, "xxl-job executor call refused", "uri", uri, "app", app, "err", err)
	}
	return answer(err)
}

// ParseCallback reads a callback body of any version (an array of items,
// or 3.5's {"callbackList":[...]}) into run results. Items without a
// logId are dropped, as xxl-job's admin drops items it cannot find.
func ParseCallback(body []byte) ([]*carillonv1.RunResult, error) {
	var items []callbackItem
	trimmed := strings.TrimSpace(string(body))
	if strings.HasPrefix(trimmed, "{") {
		var l callbackList
		if err := json.Unmarshal(body, &l); err != nil {
			return nil, err
		}
		items = l.CallbackList
	} else if err := json.Unmarshal(body, &items); err != nil {
		return nil, err
	}
	results := make([]*carillonv1.RunResult, 0, len(items))
	for _, it := range items {
		if it.LogID == nil || *it.LogID <= 0 {
			continue
		}
		code, msg := 0, ""
		if it.HandleCode != nil && *it.HandleCode != 0 {
			code = *it.HandleCode
			if it.HandleMsg != nil {
				msg = *it.HandleMsg
			}
		} else if it.ExecuteResult != nil { // before 2.3
			code, msg = it.ExecuteResult.Code, reply{Msg: it.ExecuteResult.Msg}.message()
		}
		if code == 0 {
			msg = strings.TrimSpace("job handle result lost. " + msg)
		}
		results = append(results, &carillonv1.RunResult{RunId: *it.LogID, Status: resultStatus(code), Message: msg})
	}
	return results, nil
}

// callback reports the results of body.
func (a *Admin) callback(ctx context.Context, body []byte) (int, string) {
	results, err := ParseCallback(body)
	if err != nil {
		return codeFail, "openapi invoke error: " + err.Error()
	}
	if len(results) == 0 {
		return codeSuccess, ""
	}
	res, err := a.registry.ReportResults(ctx, &carillonv1.ReportResultsRequest{Results: results})
	if err != nil {
		return a.replyTo(ctx, "callback", "", err)
	}
	for _, o := range res.GetOutcomes() {
		if o.Code != "" { // not reported back, as xxl-job's admin does not
			a.logger.WarnContext(ctx, "xxl-job callback item refused", "run", o.RunId, "code", o.Code, "reason", o.Message)
		}
	}
	return codeSuccess, ""
}
