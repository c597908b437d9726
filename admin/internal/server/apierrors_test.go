package server_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"connectrpc.com/connect"

	"github.com/carillonhq/carillon/admin/internal/dbtest"
	carillonv1 "github.com/carillonhq/carillon/proto/carillon/v1"
)

// TestMissingContentType posts JSON without a Content-Type, and with the
// one curl -d sends by default: each is 415 with a JSON body that says
// what to send, and changes nothing; a charset parameter is fine.
func TestMissingContentType(t *testing.T) {
	t.Parallel()
	dbtest.Backends(t, func(t *testing.T, be dbtest.Backend) {
		f := newFixture(t, be)
		body := `{"group":{"appName":"curl"}}`
		for _, ct := range []string{"", "application/x-www-form-urlencoded", "text/plain"} {
			before := digest(t, f.db)
			req, err := http.NewRequest(http.MethodPost, f.url+"/carillon.v1.GroupService/CreateGroup", strings.NewReader(body))
			if err != nil {
				t.Fatal(err)
			}
			req.Header.Set("Authorization", "Bearer "+f.admin)
			if ct != "" {
				req.Header.Set("Content-Type", ct)
			}
			res, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			b, err := io.ReadAll(res.Body)
			res.Body.Close()
			if err != nil {
				t.Fatal(err)
			}
			var e struct{ Code, Message string }
			if res.StatusCode != http.StatusUnsupportedMediaType || res.Header.Get("Content-Type") != "application/json" || json.Unmarshal(b, &e) != nil ||
				e.Code != "invalid_argument" || !strings.Contains(e.Message, "'Content-Type: application/json'") {
				t.Errorf("Content-Type %q: %d %s %s, want 415 with a JSON body saying what to send", ct, res.StatusCode, res.Header.Get("Content-Type"), b)
			}
			if ct != "" && !strings.Contains(e.Message, ct) {
				t.Errorf("Content-Type %q: the message %q does not name it", ct, e.Message)
			}
			if digest(t, f.db) != before {
				t.Errorf("Content-Type %q: the refused request changed the database", ct)
			}
		}
		req, err := http.NewRequest(http.MethodPost, f.url+"/carillon.v1.GroupService/CreateGroup", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Authorization", "Bearer "+f.admin)
		req.Header.Set("Content-Type", "application/json; charset=utf-8")
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != http.StatusOK {
			t.Errorf("application/json; charset=utf-8: %d, want 200", res.StatusCode)
		}
	})
}

// TestErrorsNameThings checks that errors name objects as the caller knows
// them, without the store's words.
func TestErrorsNameThings(t *testing.T) {
	t.Parallel()
	dbtest.Backends(t, func(t *testing.T, be dbtest.Backend) {
		f := newFixture(t, be)
		tests := []struct {
			proc, body, code, message string
		}{
			{"JobService/GetJob", `{"id":"99"}`, "not_found", "job 99 not found"},
			{"GroupService/GetGroup", `{"id":"99"}`, "not_found", "group 99 not found"},
			{"RunService/GetRun", `{"id":"99"}`, "not_found", "run 99 not found"},
			{"GroupService/CreateGroup", `{"group":{"appName":"app-a"}}`, "already_exists", `a group with app name "app-a" already exists`},
			{"GroupService/DeleteGroup", fmt.Sprintf(`{"id":"%d"}`, f.groupA), "failed_precondition", fmt.Sprintf("group %d has 1 jobs; delete or move them first", f.groupA)},
			{"JobService/CreateJob", `{"job":{"groupId":"999","description":"d","handler":"h","schedule":{"type":"SCHEDULE_TYPE_NONE"}}}`,
				"invalid_argument", "job.groupId: group 999 not found"},
			{"UserService/CreateApiToken", `{"name":"twice"}`, "", ""},
			{"UserService/CreateApiToken", `{"name":"twice"}`, "already_exists", `name: you already have an API token named "twice"`},
		}
		for _, tt := range tests {
			status, body := postJSON(t, f.url, "/carillon.v1."+tt.proc, tt.body, "Bearer "+f.admin)
			if tt.code == "" {
				if status != http.StatusOK {
					t.Fatalf("%s %s: %d %s", tt.proc, tt.body, status, body)
				}
				continue
			}
			code, msg := connectError(body)
			if code != tt.code || msg != tt.message {
				t.Errorf("%s %s: %s %q, want %s %q", tt.proc, tt.body, code, msg, tt.code, tt.message)
			}
		}
	})
}

// TestJSONNames checks that invalid_argument names fields as JSON does for
// a JSON request, and as the proto does for a binary one, leaving quoted
// values the caller sent as they are.
func TestJSONNames(t *testing.T) {
	t.Parallel()
	dbtest.Backends(t, func(t *testing.T, be dbtest.Backend) {
		f := newFixture(t, be)
		const bad = `{"job":{"groupId":"%d","description":"d","handler":"h","schedule":{"type":"SCHEDULE_TYPE_NONE"},"alarmEmails":["retry_count"]}}`
		_, body := postJSON(t, f.url, "/carillon.v1.JobService/CreateJob", fmt.Sprintf(bad, f.groupA), "Bearer "+f.admin)
		code, msg := connectError(body)
		if want := `job.alarmEmails[0]: must be a plain e-mail address such as ops@example.com, got "retry_count"`; code != "invalid_argument" || msg != want {
			t.Errorf("JSON: %s %q, want invalid_argument %q", code, msg, want)
		}
		_, body = postJSON(t, f.url, "/carillon.v1.RunService/DeleteRuns", `{"jobId":"1"}`, "Bearer "+f.admin)
		if _, msg := connectError(body); !strings.HasPrefix(msg, "before: set before or keepLast: ") {
			t.Errorf("JSON DeleteRuns: %q, want the rule to name keepLast", msg)
		}

		_, err := f.as["admin"].job.CreateJob(context.Background(), &carillonv1.CreateJobRequest{Job: &carillonv1.Job{
			GroupId: f.groupA, Description: "d", Handler: "h", TimeoutSeconds: -1,
			Schedule: &carillonv1.Schedule{Type: carillonv1.ScheduleType_SCHEDULE_TYPE_NONE},
		}})
		if ce := new(connect.Error); !errors.As(err, &ce) || ce.Code() != connect.CodeInvalidArgument || !strings.HasPrefix(ce.Message(), "job.timeout_seconds: ") {
			t.Errorf("binary: %v, want invalid_argument naming job.timeout_seconds", err)
		}
	})
}

// TestJSONResponseCompact checks that a JSON response is the same bytes
// every time: compact, whatever spaces protojson chose, with a newline
// that ends curl's line.
func TestJSONResponseCompact(t *testing.T) {
	t.Parallel()
	dbtest.Backends(t, func(t *testing.T, be dbtest.Backend) {
		f := newFixture(t, be)
		status, body := postJSON(t, f.url, "/carillon.v1.JobService/GetJob", fmt.Sprintf(`{"id":"%d"}`, f.jobA), "Bearer "+f.admin)
		if status != http.StatusOK || !strings.HasPrefix(body, `{"job":{"id":"`) || !strings.HasSuffix(body, "}}\n") ||
			strings.Contains(body, ", \"") || strings.Contains(body, ": ") {
			t.Errorf("GetJob: %d %q, want compact JSON and a newline", status, body)
		}
	})
}
