package server_test

import (
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"

	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"

	"github.com/carillonhq/carillon/admin/internal/dbtest"
	"github.com/carillonhq/carillon/admin/internal/store"
	carillonv1 "github.com/carillonhq/carillon/proto/carillon/v1"
	"github.com/carillonhq/carillon/proto/carillon/v1/carillonv1connect"
)

var _ = carillonv1.File_carillon_v1_user_proto // the descriptors below are registered by this import

// postJSON posts body as Connect JSON to the procedure path and returns
// the status and the body of the answer.
func postJSON(t testing.TB, base, path, body, authorization string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, base+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	if authorization != "" {
		req.Header.Set("Authorization", authorization)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return res.StatusCode, string(b)
}

// methodsOf lists the RPC names of a service, from its descriptor.
func methodsOf(t testing.TB, service string) []string {
	t.Helper()
	d, err := protoregistry.GlobalFiles.FindDescriptorByName(protoreflect.FullName(service))
	if err != nil {
		t.Fatal(err)
	}
	ms := d.(protoreflect.ServiceDescriptor).Methods()
	var names []string
	for i := range ms.Len() {
		names = append(names, string(ms.Get(i).Name()))
	}
	return names
}

// digest hashes every row of every table of the database (a SQLite file
// or a PostgreSQL URL), to tell whether a request changed anything; but
// the dashboard's counters (run_counts*), which the store folds new runs
// into in the background, and over PostgreSQL the admins' leases.
func digest(t testing.TB, database string) string {
	t.Helper()
	tablesQuery := `SELECT name FROM sqlite_schema WHERE type = 'table' AND name NOT LIKE 'run\_counts%' ESCAPE '\' ORDER BY name`
	var db *sql.DB
	if store.IsPostgresURL(database) {
		tablesQuery = `SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema()
			AND table_name NOT LIKE 'run\_counts%' AND table_name <> 'admins' ORDER BY table_name`
		db = digestPool(t, database)
	} else {
		var err error
		if db, err = sql.Open("sqlite", "file:"+database+"?mode=ro"); err != nil {
			t.Fatal(err)
		}
		defer db.Close()
	}
	rows, err := db.Query(tablesQuery)
	if err != nil {
		t.Fatal(err)
	}
	var tables []string
	for rows.Next() {
		var name string
		if err := rows.Scan(&name); err != nil {
			t.Fatal(err)
		}
		tables = append(tables, name)
	}
	rows.Close()
	h := sha256.New()
	for _, table := range tables {
		rows, err := db.Query(`SELECT * FROM "` + table + `" ORDER BY 1`)
		if err != nil {
			t.Fatal(err)
		}
		cols, _ := rows.Columns()
		vals := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		fmt.Fprintln(h, table)
		for rows.Next() {
			if err := rows.Scan(ptrs...); err != nil {
				t.Fatal(err)
			}
			fmt.Fprintln(h, vals...)
		}
		rows.Close()
	}
	return hex.EncodeToString(h.Sum(nil))
}

// digestPools are the connections digest keeps to each PostgreSQL
// database (a new connection per digest took most of TestValidation's
// time), closed when the test that made the database ends (setupLogged).
var digestPools sync.Map // database URL -> *sql.DB

// digestPool returns the connections of digestPools to database, opened
// at the first call.
func digestPool(t testing.TB, database string) *sql.DB {
	t.Helper()
	if db, ok := digestPools.Load(database); ok {
		return db.(*sql.DB)
	}
	db, err := sql.Open("pgx", database)
	if err != nil {
		t.Fatal(err)
	}
	if prev, loaded := digestPools.LoadOrStore(database, db); loaded {
		_ = db.Close()
		return prev.(*sql.DB)
	}
	return db
}

// closeDigestPool closes the connections digestPool opened to database,
// if any.
func closeDigestPool(database string) {
	if db, ok := digestPools.LoadAndDelete(database); ok {
		_ = db.(*sql.DB).Close()
	}
}

// connectError decodes a Connect JSON error body.
func connectError(body string) (code, message string) {
	var e struct{ Code, Message string }
	if err := json.Unmarshal([]byte(body), &e); err != nil {
		return "", "not a Connect error: " + body
	}
	return e.Code, e.Message
}

// validationCases: for each RPC, bodies that must be invalid_argument
// naming the field (the message starts with it), and change nothing.
var validationCases = []struct {
	proc, body, field string
}{
	{"GroupService/CreateGroup", `{}`, "group"},
	{"GroupService/CreateGroup", `{"group":{"appName":"has space"}}`, "group.appName"},
	{"GroupService/CreateGroup", `{"group":{"appName":"a","title":"` + strings.Repeat("t", 256) + `"}}`, "group.title"},
	{"GroupService/CreateGroup", `{"group":{"appName":"a","addressMode":"ADDRESS_MODE_MANUAL"}}`, "group.addresses"},
	{"GroupService/CreateGroup", `{"group":{"appName":"a","addressMode":"ADDRESS_MODE_MANUAL","addresses":["10.0.0.1:99"]}}`, "group.addresses"},
	{"GroupService/CreateGroup", `{"group":{"appName":"a","addressMode":7}}`, "group.addressMode"},
	{"GroupService/GetGroup", `{}`, "id"},
	{"GroupService/GetGroup", `{"id":"-3"}`, "id"},
	{"GroupService/UpdateGroup", `{}`, "group"},
	{"GroupService/UpdateGroup", `{"group":{"title":"x"}}`, "group.id"},
	{"GroupService/UpdateGroup", `{"group":{"id":"1","title":"x"},"updateMask":"nope"}`, "updateMask"},
	{"GroupService/DeleteGroup", `{"id":"0"}`, "id"},
	{"GroupService/PauseGroup", `{"id":"0"}`, "id"},
	{"GroupService/ResumeGroup", `{}`, "id"},
	{"GroupService/RotateGroupToken", `{"id":"0"}`, "id"},
	{"GroupService/ClearGroupToken", `{"id":"-1"}`, "id"},
	{"JobService/CreateJob", `{}`, "job"},
	{"JobService/CreateJob", `{"job":{"groupId":"1","description":"d","handler":"he\u0000llo","schedule":{"type":"SCHEDULE_TYPE_NONE"}}}`, "job.handler"},
	{"JobService/CreateJob", `{"job":{"groupId":"1","description":"d\u0000","handler":"h","schedule":{"type":"SCHEDULE_TYPE_NONE"}}}`, "job.description"},
	{"JobService/CreateJob", `{"job":{"groupId":"1","description":"d","owner":"a\nb","handler":"h","schedule":{"type":"SCHEDULE_TYPE_NONE"}}}`, "job.owner"},
	{"GroupService/CreateGroup", `{"group":{"appName":"x","title":"a\u0007b"}}`, "group.title"},
	{"JobService/TriggerJob", `{"jobId":"1","param":"a\u0000b"}`, "param"},
	{"JobService/CreateJob", `{"job":{"description":"d","handler":"h","schedule":{"type":"SCHEDULE_TYPE_NONE"}}}`, "job.groupId"},
	{"JobService/CreateJob", `{"job":{"groupId":"1","handler":"h","schedule":{"type":"SCHEDULE_TYPE_NONE"}}}`, "job.description"},
	{"JobService/CreateJob", `{"job":{"groupId":"1","description":"d","handler":"h"}}`, "job.schedule"},
	{"JobService/CreateJob", `{"job":{"groupId":"1","description":"d","schedule":{"type":"SCHEDULE_TYPE_NONE"}}}`, "job.handler"},
	{"JobService/CreateJob", `{"job":{"groupId":"1","description":"d","handler":"h","schedule":{"type":"SCHEDULE_TYPE_CRON","cron":"nope"}}}`, "job.schedule.cron"},
	{"JobService/CreateJob", `{"job":{"groupId":"1","description":"d","handler":"h","schedule":{"type":"SCHEDULE_TYPE_FIX_RATE","intervalSeconds":5,"timeZone":"Mars/Base"}}}`, "job.schedule.timeZone"},
	{"JobService/CreateJob", `{"job":{"groupId":"1","description":"d","handler":"h","schedule":{"type":"SCHEDULE_TYPE_FIX_RATE"}}}`, "job.schedule.intervalSeconds"},
	{"JobService/CreateJob", `{"job":{"groupId":"1","description":"d","handler":"h","schedule":{"type":"SCHEDULE_TYPE_FIX_RATE","intervalSeconds":99999999}}}`, "job.schedule.intervalSeconds"},
	{"JobService/CreateJob", `{"job":{"groupId":"1","description":"d","handler":"h","schedule":{"type":9}}}`, "job.schedule.type"},
	{"JobService/CreateJob", `{"job":{"groupId":"1","description":"d","handler":"h","schedule":{"type":"SCHEDULE_TYPE_NONE"},"routeStrategy":99}}`, "job.routeStrategy"},
	{"JobService/CreateJob", `{"job":{"groupId":"1","description":"d","handler":"h","schedule":{"type":"SCHEDULE_TYPE_NONE"},"blockStrategy":99}}`, "job.blockStrategy"},
	{"JobService/CreateJob", `{"job":{"groupId":"1","description":"d","handler":"h","schedule":{"type":"SCHEDULE_TYPE_NONE"},"misfireStrategy":99}}`, "job.misfireStrategy"},
	{"JobService/CreateJob", `{"job":{"groupId":"1","description":"d","handler":"h","schedule":{"type":"SCHEDULE_TYPE_NONE"},"timeoutSeconds":-1}}`, "job.timeoutSeconds"},
	{"JobService/CreateJob", `{"job":{"groupId":"1","description":"d","handler":"h","schedule":{"type":"SCHEDULE_TYPE_NONE"},"timeoutSeconds":99999999}}`, "job.timeoutSeconds"},
	{"JobService/CreateJob", `{"job":{"groupId":"1","description":"d","handler":"h","schedule":{"type":"SCHEDULE_TYPE_NONE"},"retryCount":101}}`, "job.retryCount"},
	{"JobService/CreateJob", `{"job":{"groupId":"1","description":"d","handler":"h","schedule":{"type":"SCHEDULE_TYPE_NONE"},"childJobIds":["777"]}}`, "job.childJobIds[0]"},
	{"JobService/CreateJob", `{"job":{"groupId":"1","description":"d","handler":"h","schedule":{"type":"SCHEDULE_TYPE_NONE"},"alarmEmails":["not an address"]}}`, "job.alarmEmails[0]"},
	{"JobService/CreateJob", `{"job":{"groupId":"1","description":"d","handler":"h","schedule":{"type":"SCHEDULE_TYPE_NONE"},"param":"` + strings.Repeat("p", 64<<10+1) + `"}}`, "job.param"},
	{"JobService/CreateJob", `{"job":{"groupId":"1","description":"d","schedule":{"type":"SCHEDULE_TYPE_NONE"},"script":{"type":"SCRIPT_TYPE_SHELL"}}}`, "job.script.source"},
	{"JobService/CreateJob", `{"job":{"groupId":"1","description":"d","schedule":{"type":"SCHEDULE_TYPE_NONE"},"script":{"type":42,"source":"echo"}}}`, "job.script.type"},
	{"JobService/CreateJob", `{"job":{"groupId":"999","description":"d","handler":"h","schedule":{"type":"SCHEDULE_TYPE_NONE"}}}`, "job.groupId"},
	{"JobService/GetJob", `{}`, "id"},
	{"JobService/ListJobs", `{"pageSize":501}`, "pageSize"},
	{"JobService/ListJobs", `{"pageToken":"zzz"}`, "pageToken"},
	{"JobService/ListJobs", `{"groupId":"-1"}`, "groupId"},
	{"JobService/UpdateJob", `{}`, "job"},
	{"JobService/UpdateJob", `{"job":{"param":"x"}}`, "job.id"},
	{"JobService/UpdateJob", `{"job":{"id":"1","param":"x"},"updateMask":"nextFireAt"}`, "updateMask"},
	{"JobService/UpdateJob", `{"job":{"id":"1"},"updateMask":"handler"}`, "job.handler"},
	{"JobService/DeleteJob", `{}`, "id"},
	{"JobService/StartJob", `{}`, "id"},
	{"JobService/StopJob", `{}`, "id"},
	{"JobService/StartJobs", `{}`, "ids"},
	{"JobService/StopJobs", `{"ids":["1","1"]}`, "ids"},
	{"JobService/StopJobs", `{"ids":["1","-2"]}`, "ids[1]"},
	{"JobService/TriggerJob", `{}`, "jobId"},
	{"JobService/TriggerJob", `{"jobId":"1","addresses":["nope"]}`, "addresses[0]"},
	{"JobService/BackfillJob", `{}`, "jobId"},
	{"JobService/BackfillJob", `{"jobId":"1","to":"2026-01-01T00:00:00Z"}`, "from"},
	{"JobService/BackfillJob", `{"jobId":"1","from":"2026-01-02T00:00:00Z","to":"2026-01-01T00:00:00Z"}`, "to"},
	{"JobService/PreviewSchedule", `{}`, "schedule"},
	{"JobService/PreviewSchedule", `{"schedule":{"type":"SCHEDULE_TYPE_FIX_RATE","intervalSeconds":1},"count":101}`, "count"},
	{"RunService/ListRuns", `{"status":99}`, "status"},
	{"RunService/ListRuns", `{"pageSize":-1}`, "pageSize"},
	{"RunService/ListRuns", `{"jobId":"-1"}`, "jobId"},
	{"RunService/ListRuns", `{"from":"2026-01-02T00:00:00Z","to":"2026-01-01T00:00:00Z"}`, "to"},
	{"RunService/GetRun", `{}`, "id"},
	{"RunService/ReadRunLog", `{}`, "runId"},
	{"RunService/ReadRunLog", `{"runId":"1","fromLine":-1}`, "fromLine"},
	{"RunService/KillRun", `{}`, "runId"},
	{"RunService/DeleteRuns", `{"keepLast":-1}`, "keepLast"},
	{"RunService/DeleteRuns", `{}`, "before"},
	{"ReportService/GetDashboard", `{"from":"2026-01-02T00:00:00Z","to":"2026-01-01T00:00:00Z"}`, "from"},
	{"UserService/Login", `{}`, "username"},
	{"UserService/Login", `{"username":"root"}`, "password"},
	{"UserService/ChangePassword", `{"newPassword":"long enough"}`, "oldPassword"},
	{"UserService/ChangePassword", `{"oldPassword":"x","newPassword":"short"}`, "newPassword"},
	{"UserService/CreateUser", `{}`, "user"},
	{"UserService/CreateUser", `{"user":{"username":"a b","role":"ROLE_VIEWER"},"password":"long enough"}`, "user.username"},
	{"UserService/CreateUser", `{"user":{"username":"ada","role":"ROLE_VIEWER"},"password":"short"}`, "password"},
	{"UserService/CreateUser", `{"user":{"username":"ada"},"password":"long enough"}`, "user.role"},
	{"UserService/CreateUser", `{"user":{"username":"ada","role":9},"password":"long enough"}`, "user.role"},
	{"UserService/CreateUser", `{"user":{"username":"ada","role":"ROLE_VIEWER","groupIds":["1"]},"password":"long enough"}`, "user.groupIds"},
	{"UserService/CreateUser", `{"user":{"username":"ada","role":"ROLE_MEMBER","groupIds":["999"]},"password":"long enough"}`, "user.groupIds"},
	{"UserService/CreateUser", `{"user":{"username":"ada","role":"ROLE_MEMBER","groupIds":["0"]},"password":"long enough"}`, "user.groupIds[0]"},
	{"JobService/ImportJobs", `{}`, "groups"},
	{"JobService/ImportJobs", `{"groups":[{"id":"1","appName":"bad name"}]}`, "groups[0] (source id 1).appName"},
	{"JobService/ImportJobs", `{"groups":[{"id":"1","appName":"imp","executorProtocol":7}]}`, "groups[0] (source id 1).executorProtocol"},
	{"JobService/ImportJobs", `{"groups":[{"id":"1","appName":"imp"},{"id":"1","appName":"imp2"}]}`, "groups[1] (source id 1).id"},
	{"JobService/ImportJobs", `{"groups":[{"id":"1","appName":"imp"}],"jobs":[{"id":"5","groupId":"2","description":"d","handler":"h","schedule":{"type":"SCHEDULE_TYPE_NONE"}}]}`, "jobs[0] (source id 5).groupId"},
	{"JobService/ImportJobs", `{"groups":[{"id":"1","appName":"imp"}],"jobs":[{"id":"5","groupId":"1","description":"d","handler":"h","schedule":{"type":"SCHEDULE_TYPE_CRON","cron":"nope"}}]}`, "jobs[0] (source id 5).schedule.cron"},
	{"JobService/ImportJobs", `{"groups":[{"id":"1","appName":"imp"}],"jobs":[{"id":"5","groupId":"1","description":"d","handler":"h","childJobIds":["6"],"schedule":{"type":"SCHEDULE_TYPE_NONE"}}]}`, "jobs[0] (source id 5).childJobIds[0]"},
	{"JobService/ImportJobs", `{"groups":[{"id":"1","appName":"imp"}],"jobs":[{"id":"5","groupId":"1","description":"d","script":{"type":"SCRIPT_TYPE_GROOVY","source":"class X {}"},"schedule":{"type":"SCHEDULE_TYPE_NONE"}}]}`, "jobs[0] (source id 5).script.type"},
	{"JobService/ImportJobs", `{"groups":[{"id":"1","appName":"imp"}],"jobs":[{"id":"5","groupId":"1","description":"d","handler":"h","childJobIds":["6"],"schedule":{"type":"SCHEDULE_TYPE_NONE"}},{"id":"6","groupId":"1","description":"d","handler":"h","childJobIds":["5"],"schedule":{"type":"SCHEDULE_TYPE_NONE"}}]}`, "jobs (source id 5).childJobIds"},
	{"JobService/CreateJob", `{"job":{"groupId":"1","description":"d","script":{"type":"SCRIPT_TYPE_GROOVY","source":"class X {}"},"schedule":{"type":"SCHEDULE_TYPE_NONE"}}}`, "job.script.type"},
	{"GroupService/CreateGroup", `{"group":{"appName":"x","executorProtocol":9}}`, "group.executorProtocol"},
	{"UserService/GetUser", `{}`, "id"},
	{"UserService/UpdateUser", `{"user":{"role":"ROLE_VIEWER"}}`, "user.id"},
	{"UserService/UpdateUser", `{"user":{"id":"1"},"updateMask":"username"}`, "updateMask"},
	{"UserService/UpdateUser", `{"user":{"id":"1","disabled":true},"updateMask":"disabled","password":"short"}`, "password"},
	{"UserService/DeleteUser", `{}`, "id"},
	{"UserService/UnlockUser", `{"id":"0"}`, "id"},
	{"UserService/CreateApiToken", `{}`, "name"},
	{"UserService/CreateApiToken", `{"name":"` + strings.Repeat("n", 65) + `"}`, "name"},
	{"UserService/CreateApiToken", `{"name":"x","expiresInSeconds":"-5"}`, "expiresInSeconds"},
	{"UserService/ListApiTokens", `{"userId":"-1"}`, "userId"},
	{"UserService/RevokeApiToken", `{}`, "id"},
	{"UserService/ListAuditLog", `{"pageSize":9999}`, "pageSize"},
	{"UserService/ListAuditLog", `{"from":"2026-01-02T00:00:00Z","to":"2026-01-01T00:00:00Z"}`, "to"},
}

// TestValidation sends each bad request as an ADMIN over JSON: each is
// invalid_argument, its message starts with the field, and the database is
// unchanged.
func TestValidation(t *testing.T) {
	t.Parallel()
	dbtest.Backends(t, func(t *testing.T, be dbtest.Backend) {
		f := newFixture(t, be)
		covered := map[string]bool{}
		for _, tt := range validationCases {
			covered[tt.proc] = true
			before := digest(t, f.db)
			status, body := postJSON(t, f.url, "/carillon.v1."+tt.proc, tt.body, "Bearer "+f.admin)
			code, msg := connectError(body)
			if status != http.StatusBadRequest || code != "invalid_argument" || !strings.HasPrefix(msg, tt.field+": ") {
				t.Errorf("%s %.100s: %d %s %q, want invalid_argument naming %s", tt.proc, tt.body, status, code, msg, tt.field)
			}
			if after := digest(t, f.db); after != before {
				t.Errorf("%s %.100s: a refused request changed the database", tt.proc, tt.body)
			}
		}
		// Every RPC with input has a case.
		for _, svc := range []string{carillonv1connect.GroupServiceName, carillonv1connect.JobServiceName,
			carillonv1connect.RunServiceName, carillonv1connect.UserServiceName} {
			for _, m := range methodsOf(t, svc) {
				proc := strings.TrimPrefix(svc, "carillon.v1.") + "/" + m
				switch proc {
				case "GroupService/ListGroups", "UserService/Logout", "UserService/GetCurrentUser", "UserService/ListUsers",
					"UserService/GetExecutorToken": // no input
					continue
				}
				if !covered[proc] {
					t.Errorf("no validation case for %s", proc)
				}
			}
		}
	})
}

// TestRequestSizeLimit checks that a body over the limit is refused
// (resource_exhausted) and stores nothing.
func TestRequestSizeLimit(t *testing.T) {
	t.Parallel()
	dbtest.Backends(t, func(t *testing.T, be dbtest.Backend) {
		f := newFixture(t, be)
		before := digest(t, f.db)
		big := `{"job":{"groupId":"1","description":"d","handler":"h","schedule":{"type":"SCHEDULE_TYPE_NONE"},"param":"` +
			strings.Repeat("x", 2<<20) + `"}}`
		status, body := postJSON(t, f.url, "/carillon.v1.JobService/CreateJob", big, "Bearer "+f.admin)
		if code, _ := connectError(body); status != http.StatusTooManyRequests || code != "resource_exhausted" {
			t.Errorf("2 MiB request: %d %.200s, want resource_exhausted", status, body)
		}
		if digest(t, f.db) != before {
			t.Error("an oversized request changed the database")
		}
	})
}

// FuzzManagementJSON drives the JSON endpoints with random and mutated
// bodies as an ADMIN (and RegistryService with the executor token): no
// panic, no 5xx but unavailable, and a refused request changes nothing.
// Its seeds run in go test.
func FuzzManagementJSON(f *testing.F) {
	fx := newFixture(f, dbtest.SQLite) // SQLite: fuzzing is no test of the backend
	var procs []string
	for _, svc := range []string{carillonv1connect.GroupServiceName, carillonv1connect.JobServiceName,
		carillonv1connect.RunServiceName, carillonv1connect.ReportServiceName, carillonv1connect.UserServiceName,
		carillonv1connect.RegistryServiceName} {
		for _, m := range methodsOf(f, svc) {
			if m == "Logout" || m == "DeleteUser" {
				continue // would end the fuzzer's own credential
			}
			procs = append(procs, "/"+svc+"/"+m)
		}
	}
	for _, tt := range validationCases {
		for i, p := range procs {
			if strings.HasSuffix(p, "."+tt.proc) {
				f.Add(uint8(i), tt.body)
			}
		}
	}
	for i := range procs {
		for _, body := range []string{`{}`, ``, `{`, `null`, `[]`, `{"id":"1"}`, `{"id":1e99}`, `{"id":"x"}`, "\x00\xff",
			`{"job":{"groupId":"1","description":"d","handler":"h","schedule":{"type":"SCHEDULE_TYPE_CRON","cron":"*/5 * * * * ?"},"enabled":true}}`,
			`{"group":{"appName":"fz","addressMode":"ADDRESS_MODE_MANUAL","addresses":["http://127.0.0.1:1"]}}`,
			`{"user":{"username":"fuzzy","role":"ROLE_MEMBER","groupIds":["1"]},"password":"long enough"}`,
			`{"results":[{"runId":"1","status":"RUN_STATUS_SUCCEEDED"}]}`, `{"appName":"a","address":"http://127.0.0.1:1"}`} {
			f.Add(uint8(i), body)
		}
	}
	f.Fuzz(func(t *testing.T, which uint8, body string) {
		proc := procs[int(which)%len(procs)]
		header := "Bearer " + fx.admin
		if strings.Contains(proc, "RegistryService") {
			header = "Bearer s3cret"
		}
		before := digest(t, fx.db)
		status, answer := postJSON(t, fx.url, proc, body, header)
		if status >= 500 && status != http.StatusServiceUnavailable {
			t.Fatalf("%s %q: %d %s", proc, body, status, answer)
		}
		if status != http.StatusOK {
			if code, _ := connectError(answer); code == "" && status != http.StatusUnsupportedMediaType {
				t.Errorf("%s %q: %d with no Connect error: %q", proc, body, status, answer)
			}
			if digest(t, fx.db) != before {
				t.Errorf("%s %q: refused (%d %s) but the database changed", proc, body, status, answer)
			}
		}
	})
}
