package server_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"connectrpc.com/connect"
	"google.golang.org/protobuf/types/known/fieldmaskpb"

	"github.com/carillonhq/carillon/admin/internal/dbtest"
	carillonv1 "github.com/carillonhq/carillon/proto/carillon/v1"
)

// TestStrictJSON sends JSON with misspelled enum names and unknown fields:
// each is invalid_argument naming the field, and the database is unchanged
// (connect-go's codec took the default, or dropped the field, silently).
func TestStrictJSON(t *testing.T) {
	t.Parallel()
	dbtest.Backends(t, func(t *testing.T, be dbtest.Backend) {
		f := newFixture(t, be)
		for _, tt := range []struct{ proc, body, want string }{
			{"GroupService/CreateGroup", `{"group":{"appName":"x","addressMode":"ADDRESS_MODE_MANUEL","addresses":["http://10.0.0.1:9"]}}`,
				`group.addressMode: unknown value "ADDRESS_MODE_MANUEL"`},
			{"GroupService/UpdateGroup", `{"group":{"id":"1","address_mode":"ADDRESS_MODE_MANUEL"},"updateMask":"addressMode"}`,
				`group.address_mode: unknown value`},
			{"JobService/CreateJob", `{"job":{"groupId":"1","description":"d","handler":"h","routeStrategy":"ROUTE_STRATEGY_ROUND_ROBBIN",` +
				`"schedule":{"type":"SCHEDULE_TYPE_NONE"}}}`, `job.routeStrategy: unknown value "ROUTE_STRATEGY_ROUND_ROBBIN"`},
			{"JobService/CreateJob", `{"job":{"groupId":"1","description":"d","handler":"h","schedule":{"type":"SCHEDULE_TYPE_KRON"}}}`,
				`job.schedule.type: unknown value`},
			{"RunService/ListRuns", `{"status":"RUN_STATUS_BOGUS"}`, `status: unknown value "RUN_STATUS_BOGUS"`},
			{"GroupService/CreateGroup", `{"group":{"appName":"x","colour":"red"}}`, `group.colour: unknown field`},
			{"JobService/ListJobs", `{"pageSise":5}`, `pageSise: unknown field`},
			{"UserService/CreateUser", `{"user":{"username":"ada","role":"ROLE_OWNER"},"password":"long enough"}`, `user.role: unknown value`},
		} {
			before := digest(t, f.db)
			status, body := postJSON(t, f.url, "/carillon.v1."+tt.proc, tt.body, "Bearer "+f.admin)
			code, msg := connectError(body)
			if status != http.StatusBadRequest || code != "invalid_argument" || !strings.HasPrefix(msg, tt.want) {
				t.Errorf("%s %s: %d %s %q, want invalid_argument saying %q", tt.proc, tt.body, status, code, msg, tt.want)
			}
			if after := digest(t, f.db); after != before {
				t.Errorf("%s %s: a refused request changed the database", tt.proc, tt.body)
			}
		}
		// Known names, in either form, pass.
		status, body := postJSON(t, f.url, "/carillon.v1.RunService/ListRuns", `{"status":"RUN_STATUS_FAILED","page_size":5}`, "Bearer "+f.admin)
		if status != http.StatusOK {
			t.Errorf("ListRuns with proto field names: %d %s", status, body)
		}
	})
}

// TestUpdateMaskNames checks that an update mask takes proto names
// ("route_strategy") over JSON as well as lowerCamelCase, as the proto
// says, and over the Go client.
func TestUpdateMaskNames(t *testing.T) {
	t.Parallel()
	dbtest.Backends(t, func(t *testing.T, be dbtest.Backend) {
		f := newFixture(t, be)
		for i, mask := range []string{"title,address_mode,addresses", "title,addressMode,addresses"} {
			title := []string{"snake", "camel"}[i]
			status, body := postJSON(t, f.url, "/carillon.v1.GroupService/UpdateGroup",
				`{"group":{"id":"1","title":"`+title+`","addressMode":"ADDRESS_MODE_MANUAL","addresses":["http://10.0.0.9:9999"]},"updateMask":"`+mask+`"}`,
				"Bearer "+f.admin)
			if status != http.StatusOK || !strings.Contains(body, `"title":"`+title+`"`) || !strings.Contains(body, "ADDRESS_MODE_MANUAL") {
				t.Errorf("UpdateGroup with mask %q: %d %s", mask, status, body)
			}
		}
		res, err := f.as["admin"].group.UpdateGroup(context.Background(), &carillonv1.UpdateGroupRequest{
			Group: &carillonv1.Group{Id: 1, Title: "go"}, UpdateMask: &fieldmaskpb.FieldMask{Paths: []string{"title"}}})
		if err != nil || res.Group.Title != "go" {
			t.Errorf("UpdateGroup over the Go client with a proto-name mask: %v %v", res, err)
		}
	})
}

// TestGzipBomb sends an unauthenticated Login whose gzip body (under
// 1 MiB) decompresses to 900 MiB: it is refused with resource_exhausted after
// decompressing little more than the read limit.
func TestGzipBomb(t *testing.T) {
	t.Parallel()
	dbtest.Backends(t, func(t *testing.T, be dbtest.Backend) {
		f := newFixture(t, be)
		// 900 gzip members of 1 MiB of zeros each (under 1 MiB in all): readers
		// take concatenated members as one stream, 900 MiB of zeros.
		var member bytes.Buffer
		zw, _ := gzip.NewWriterLevel(&member, gzip.BestCompression)
		_, _ = zw.Write(make([]byte, 1<<20)) // into memory: cannot fail
		zw.Close()
		bomb := bytes.NewBuffer(bytes.Repeat(member.Bytes(), 900))
		req, err := http.NewRequest(http.MethodPost, f.url+"/carillon.v1.UserService/Login", bytes.NewReader(bomb.Bytes()))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Content-Encoding", "gzip")
		start := time.Now()
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(res.Body)
		res.Body.Close()
		elapsed := time.Since(start)
		code, msg := connectError(string(body))
		if code != connect.CodeResourceExhausted.String() {
			t.Errorf("gzip bomb (%d bytes): %d %s %q, want resource_exhausted", bomb.Len(), res.StatusCode, code, msg)
		}
		// Without the cap, connect-go decompresses all 900 MiB to report the
		// message's size ("message size 943718400 is larger ..."); with it,
		// reading stops just past the limit.
		if strings.Contains(msg, "943718400") || !strings.Contains(msg, "decompressed message is larger than the admin accepts") {
			t.Errorf("the bomb was decompressed in full: %q", msg)
		}
		t.Logf("%d-byte gzip body refused in %s: %s", bomb.Len(), elapsed, msg)
	})
}

// TestErrorsInCallersWords: the errors a caller reads name no Go package
// ("auth: ", "unmarshal message: ") and name fields as the request did.
func TestErrorsInCallersWords(t *testing.T) {
	t.Parallel()
	dbtest.Backends(t, func(t *testing.T, be dbtest.Backend) {
		f := newFixture(t, be)
		for _, tt := range []struct{ proc, body, auth, want string }{
			{"UserService/Login", `{"username":"admin","password":"not the password"}`, "", "wrong username or password"},
			{"JobService/ListJobs", `{"pageSize":"many"}`, "Bearer " + f.admin, "the request body is not a ListJobsRequest in JSON"},
			{"JobService/CreateJob", `{"job":{"route_strategy":"FIRST"}}`, "Bearer " + f.admin, `job.route_strategy: unknown value "FIRST"`},
		} {
			_, body := postJSON(t, f.url, "/carillon.v1."+tt.proc, tt.body, tt.auth)
			if _, msg := connectError(body); !strings.HasPrefix(msg, tt.want) {
				t.Errorf("%s %s: %q, want it to start with %q", tt.proc, tt.body, msg, tt.want)
			}
		}
	})
}
