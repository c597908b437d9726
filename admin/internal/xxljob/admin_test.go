package xxljob

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/carillonhq/carillon/internal/testkit"
	carillonv1 "github.com/carillonhq/carillon/proto/carillon/v1"
	"github.com/carillonhq/carillon/proto/carillon/v1/carillonv1connect"
)

// countingBody is a request body of n bytes of a JSON array that counts
// the bytes read from it.
type countingBody struct {
	left int
	read atomic.Int64
}

func (b *countingBody) Read(p []byte) (int, error) {
	if b.left == 0 {
		return 0, http.ErrBodyReadAfterClose
	}
	n := min(len(p), b.left)
	for i := range n {
		p[i] = ' '
	}
	b.left -= n
	b.read.Add(int64(n))
	return n, nil
}

func (b *countingBody) Close() error { return nil }

// registryDouble is a RegistryService that counts the calls it gets.
type registryDouble struct {
	carillonv1connect.UnimplementedRegistryServiceHandler
	calls atomic.Int64
}

func (r *registryDouble) ReportResults(context.Context, *carillonv1.ReportResultsRequest) (*carillonv1.ReportResultsResponse, error) {
	r.calls.Add(1)
	return &carillonv1.ReportResultsResponse{}, nil
}

func (r *registryDouble) Register(context.Context, *carillonv1.RegisterRequest) (*carillonv1.RegisterResponse, error) {
	r.calls.Add(1)
	return &carillonv1.RegisterResponse{}, nil
}

// TestTokenBeforeBody: a call whose access token the admin does not know
// is refused, in the words of the executor's version, before a byte of its
// body is read (a 4 MiB body cost ~180 ms of CPU to read and decode); a
// known token is read and passed on.
func TestTokenBeforeBody(t *testing.T) {
	t.Parallel()
	reg := &registryDouble{}
	url := testkit.ServeRegistry(t, reg)
	known := func(token string) bool { return token == "right" }
	a := NewAdmin(http.DefaultClient, url, known, nil)

	for _, tt := range []struct {
		name, path string
		headers    map[string]string
		msg        string
	}{
		{"classic wrong", "/api/callback", map[string]string{TokenHeader: "wrong"}, msgTokenClassic},
		{"classic none", "/xxl-job-admin/api/callback", nil, msgTokenClassic},
		{"classic registry", "/api/registry", map[string]string{TokenHeader: "wrong"}, msgTokenClassic},
		{"3.5 wrong", "/api/callback", map[string]string{TokenHeader: "wrong", AppNameHeader: "app"}, msgTokenWrong35},
		{"3.5 none", "/api/registry", map[string]string{AppNameHeader: "app"}, msgTokenEmpty35},
		{"unknown uri", "/api/nope", map[string]string{TokenHeader: "wrong"}, msgTokenClassic},
	} {
		body := &countingBody{left: maxBody}
		req := httptest.NewRequest(http.MethodPost, tt.path, nil)
		req.Body = body
		for k, v := range tt.headers {
			req.Header.Set(k, v)
		}
		w := httptest.NewRecorder()
		a.ServeHTTP(w, req)
		var got struct {
			Code int    `json:"code"`
			Msg  string `json:"msg"`
		}
		if err := json.Unmarshal(w.Body.Bytes(), &got); err != nil {
			t.Fatalf("%s: %v: %s", tt.name, err, w.Body)
		}
		if got.Code != codeFail || got.Msg != tt.msg {
			t.Errorf("%s: %d %q, want %d %q", tt.name, got.Code, got.Msg, codeFail, tt.msg)
		}
		if n := body.read.Load(); n != 0 {
			t.Errorf("%s: %d bytes of the body read before the token was refused, want none", tt.name, n)
		}
	}
	if n := reg.calls.Load(); n != 0 {
		t.Errorf("%d RegistryService calls for refused tokens, want none", n)
	}

	// A known token: the body is read and the call made.
	req := httptest.NewRequest(http.MethodPost, "/api/callback", strings.NewReader(`[{"logId":7,"handleCode":200}]`))
	req.Header.Set(TokenHeader, "right")
	w := httptest.NewRecorder()
	a.ServeHTTP(w, req)
	if !strings.Contains(w.Body.String(), `"code":200`) || reg.calls.Load() != 1 {
		t.Errorf("known token: %s, %d calls; want code 200 and one ReportResults", w.Body, reg.calls.Load())
	}
	// Without a check (nil), the RegistryService call judges the token.
	open := NewAdmin(http.DefaultClient, url, nil, nil)
	req = httptest.NewRequest(http.MethodPost, "/api/callback", strings.NewReader(`[{"logId":7,"handleCode":200}]`))
	req.Header.Set(TokenHeader, "anything")
	w = httptest.NewRecorder()
	open.ServeHTTP(w, req)
	if !strings.Contains(w.Body.String(), `"code":200`) || reg.calls.Load() != 2 {
		t.Errorf("no check: %s, %d calls; want code 200 and a second ReportResults", w.Body, reg.calls.Load())
	}
}
