package xxljob

import (
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"connectrpc.com/connect"
	"google.golang.org/protobuf/types/known/timestamppb"

	carillonv1 "github.com/carillonhq/carillon/proto/carillon/v1"
)

// sent is one request an executor received, as a golden file shows it.
type sent struct {
	Path    string            `json:"path"`
	Headers map[string]string `json:"headers"`
	Body    json.RawMessage   `json:"body,omitempty"`
}

// fakeExecutor answers as one flavour of xxl-job executor and records
// what it is sent.
type fakeExecutor struct {
	flavour string // classic (2.x to 3.2), 3.4 (data envelope), 3.5 (/trigger only), executor-go (404 on unknown paths)
	mu      sync.Mutex
	got     []sent
}

func (f *fakeExecutor) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	f.mu.Lock()
	s := sent{Path: r.URL.Path, Headers: map[string]string{}}
	for _, h := range []string{"Content-Type", TokenHeader, AppNameHeader} {
		if v := r.Header.Get(h); v != "" {
			s.Headers[h] = v
		}
	}
	if len(body) > 0 {
		s.Body = body
	}
	f.got = append(f.got, s)
	f.mu.Unlock()
	known := map[string]bool{"/run": f.flavour != "3.5", "/trigger": f.flavour == "3.5", "/beat": true, "/idleBeat": true, "/kill": true, "/log": true}
	if !known[r.URL.Path] {
		if f.flavour == "executor-go" {
			http.NotFound(w, r)
			return
		}
		_, _ = io.WriteString(w, `{"code":500,"msg":"invalid request, uri-mapping(`+r.URL.Path+`) not found."}`)
		return
	}
	payload := "content"
	if f.flavour == "3.4" || f.flavour == "3.5" {
		payload = "data"
	}
	switch r.URL.Path {
	case "/idleBeat":
		_, _ = io.WriteString(w, `{"code":500,"msg":"job thread is running or has trigger queue."}`)
	case "/log":
		_, _ = io.WriteString(w, `{"code":200,"msg":null,"`+payload+`":{"fromLineNum":1,"toLineNum":2,"logContent":"line 1\nline 2\n","isEnd":false}}`)
	default:
		_, _ = io.WriteString(w, `{"code":200,"msg":"Success"}`)
	}
}

// TestClientVersions drives the client against each flavour of executor
// and compares every request it sent (path, headers, JSON) with the golden
// file of the flavour: testdata/sent/<flavour>.json.
func TestClientVersions(t *testing.T) {
	t.Parallel()
	for _, flavour := range []string{"classic", "3.4", "3.5", "executor-go"} {
		t.Run(flavour, func(t *testing.T) {
			t.Parallel()
			f := &fakeExecutor{flavour: flavour}
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			srv := &http.Server{Handler: f, ReadHeaderTimeout: 5 * time.Second}
			go func() { _ = srv.Serve(ln) }()
			t.Cleanup(func() { _ = srv.Close() })
			c := NewClient(http.DefaultClient, "http://"+ln.Addr().String()+"/", func(context.Context) Credentials {
				return Credentials{Token: "default_token", AppName: "xxl-job-executor-sample"}
			})
			ctx := context.Background()
			at := time.Date(2026, 6, 21, 8, 0, 0, 0, time.UTC)
			run := &carillonv1.RunRequest{RunId: 1024, JobId: 7, Handler: "demoJobHandler", Param: "a=1",
				BlockStrategy: carillonv1.BlockStrategy_BLOCK_STRATEGY_DISCARD_LATER, TimeoutSeconds: 30,
				ShardIndex: 1, ShardTotal: 3, ScheduledAt: timestamppb.New(at), DatabaseId: "db"}
			script := &carillonv1.RunRequest{RunId: 1025, JobId: 8, Param: "p", ShardTotal: 1, ScheduledAt: timestamppb.New(at),
				Script: &carillonv1.Script{Type: carillonv1.ScriptType_SCRIPT_TYPE_SHELL, Source: "echo hi", UpdatedAt: timestamppb.New(at.Add(-time.Hour))}}
			for _, req := range []*carillonv1.RunRequest{run, script} {
				if _, err := c.Run(ctx, req); err != nil {
					t.Fatalf("Run %d: %v", req.RunId, err)
				}
			}
			if _, err := c.Beat(ctx, &carillonv1.BeatRequest{}); err != nil {
				t.Fatalf("Beat: %v", err)
			}
			idle, err := c.IdleBeat(ctx, &carillonv1.IdleBeatRequest{JobId: 7})
			if err != nil || idle.Idle || idle.Reason != "/idleBeat: code 500: job thread is running or has trigger queue." {
				t.Errorf("IdleBeat = %v, %v; want busy with the executor's reason", idle, err)
			}
			if _, err := c.Kill(ctx, &carillonv1.KillRequest{JobId: 7, RunId: 1024}); err != nil {
				t.Fatalf("Kill: %v", err)
			}
			page, err := c.ReadLog(ctx, &carillonv1.ReadLogRequest{RunId: 1024, FromLine: 1, ScheduledAt: timestamppb.New(at)})
			if err != nil || page.FromLine != 1 || page.ToLine != 2 || page.Content != "line 1\nline 2\n" || page.End {
				t.Errorf("ReadLog = %v, %v; want lines 1 to 2", page, err)
			}
			if _, err := c.RunBatch(ctx, &carillonv1.RunBatchRequest{}); connect.CodeOf(err) != connect.CodeUnimplemented {
				t.Errorf("RunBatch: %v, want unimplemented", err)
			}
			if _, err := c.HeldRuns(ctx, &carillonv1.HeldRunsRequest{}); connect.CodeOf(err) != connect.CodeUnimplemented {
				t.Errorf("HeldRuns: %v, want unimplemented", err)
			}
			f.mu.Lock()
			defer f.mu.Unlock()
			golden(t, filepath.Join("testdata", "sent", flavour+".json"), stableJSON(t, f.got))
		})
	}
}

// TestClientRefusals: an executor's refusals become Connect errors with
// its words.
func TestClientRefusals(t *testing.T) {
	t.Parallel()
	tests := []struct {
		reply string
		code  connect.Code
	}{
		{`{"code":500,"msg":"job handler [nope] not found."}`, connect.CodeNotFound},
		{`{"code":500,"msg":"There are tasks running"}`, connect.CodeAborted},
		{`{"code":500,"msg":"block strategy effect：Discard Later"}`, connect.CodeAborted},
		{`{"code":500,"msg":"The access token is wrong."}`, connect.CodeUnauthenticated},
		{`{"code":500,"msg":"fail, current glue type [GLUE(Shell)] not supported."}`, connect.CodeFailedPrecondition},
		{`not json`, connect.CodeUnavailable},
	}
	for _, tt := range tests {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		srv := &http.Server{ReadHeaderTimeout: 5 * time.Second, Handler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			_, _ = io.WriteString(w, tt.reply)
		})}
		go func() { _ = srv.Serve(ln) }()
		c := NewClient(http.DefaultClient, "http://"+ln.Addr().String(), func(context.Context) Credentials { return Credentials{} })
		_, err = c.Run(context.Background(), &carillonv1.RunRequest{RunId: 1, ScheduledAt: timestamppb.Now()})
		if connect.CodeOf(err) != tt.code {
			t.Errorf("reply %s: %v, want %s", tt.reply, err, tt.code)
		}
		_ = srv.Close()
	}
}

// TestCallbackVersions reads the callback body of each version
// (testdata/callback/<version>.json) and compares the results with its
// golden file.
func TestCallbackVersions(t *testing.T) {
	t.Parallel()
	files, err := filepath.Glob("testdata/callback/*.json")
	if err != nil || len(files) == 0 {
		t.Fatalf("no callback fixtures: %v", err)
	}
	for _, path := range files {
		if strings.HasSuffix(path, ".golden.json") {
			continue
		}
		body, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		results, err := ParseCallback([]byte(strings.ReplaceAll(string(body), "LOGID", "1024")))
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		golden(t, strings.TrimSuffix(path, ".json")+".golden.json", stableJSON(t, &carillonv1.ReportResultsRequest{Results: results}))
	}
	for _, bad := range []string{``, `{`, `[{"logId":"x"}]`, `{"callbackList":7}`} {
		if _, err := ParseCallback([]byte(bad)); err == nil {
			t.Errorf("ParseCallback(%q): no error", bad)
		}
	}
}
