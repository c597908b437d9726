package admin_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/protobuf/types/known/fieldmaskpb"

	carillonv1 "github.com/carillonhq/carillon/proto/carillon/v1"
)

// javaExecutor is a double of an xxl-job 3.5 Java executor (xxl-job-core
// HEAD), built from its protocol: it serves /trigger (not /run), /beat,
// /idleBeat, /kill and /log, requires XXL-JOB-ACCESS-TOKEN and
// XXL-JOB-APPNAME, answers in the {code, msg, data} envelope, and reports
// results as {"callbackList": [...]} with logDateTime.
type javaExecutor struct {
	admin, app, address string
	mu                  sync.Mutex
	triggers            map[int64]map[string]any // TriggerRequests by logId
	triggered           chan int64
	kills               []int64 // jobIds
	logReqs             []map[string]any
}

func startJavaExecutor(t *testing.T, adminURL, app string) *javaExecutor {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	j := &javaExecutor{admin: adminURL, app: app, address: "http://" + ln.Addr().String() + "/",
		triggers: map[int64]map[string]any{}, triggered: make(chan int64, 64)}
	srv := &http.Server{Handler: j, ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })
	return j
}

func (j *javaExecutor) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "text/html;charset=UTF-8") // sic, as xxl-job's EmbedServer
	answer := func(code int, msg string, data any) {
		_ = json.NewEncoder(w).Encode(map[string]any{"code": code, "msg": msg, "data": data})
	}
	if r.Method != http.MethodPost {
		answer(500, "invalid request, HttpMethod not support.", nil)
		return
	}
	if r.Header.Get("XXL-JOB-ACCESS-TOKEN") == "" || r.Header.Get("XXL-JOB-APPNAME") == "" {
		answer(500, "invalid request, accessToken or appname is empty.", nil)
		return
	}
	if r.Header.Get("XXL-JOB-ACCESS-TOKEN") != token || r.Header.Get("XXL-JOB-APPNAME") != j.app {
		answer(500, "invalid request, accessToken or appname invalid.", nil)
		return
	}
	var body map[string]any
	_ = json.NewDecoder(r.Body).Decode(&body)
	num := func(k string) int64 { f, _ := body[k].(float64); return int64(f) }
	switch r.URL.Path {
	case "/beat":
		answer(200, "Success", nil)
	case "/idleBeat":
		answer(200, "Success", nil)
	case "/trigger":
		id := num("logId")
		j.mu.Lock()
		j.triggers[id] = body
		j.mu.Unlock()
		answer(200, "Success", nil)
		j.triggered <- id
	case "/kill":
		j.mu.Lock()
		j.kills = append(j.kills, num("jobId"))
		j.mu.Unlock()
		answer(200, "Success", nil)
	case "/log":
		j.mu.Lock()
		j.logReqs = append(j.logReqs, body)
		j.mu.Unlock()
		answer(200, "Success", map[string]any{"fromLineNum": num("fromLineNum"), "toLineNum": 2,
			"logContent": fmt.Sprintf("log %d\nline 2\n", num("logId")), "isEnd": false})
	default:
		answer(500, "invalid request, uri-mapping("+r.URL.Path+") not found.", nil)
	}
}

// post sends body to the admin's path with the 3.5 headers (or those
// given) and returns the reply's code and msg.
func (j *javaExecutor) post(t *testing.T, method, path, body string, headers map[string]string) (int, any) {
	t.Helper()
	req, err := http.NewRequest(method, j.admin+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json;charset=UTF-8")
	if headers == nil {
		headers = map[string]string{"XXL-JOB-ACCESS-TOKEN": token, "XXL-JOB-APPNAME": j.app}
	}
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	data, _ := io.ReadAll(res.Body)
	var reply struct {
		Code int `json:"code"`
		Msg  any `json:"msg"`
	}
	if err := json.Unmarshal(data, &reply); err != nil || res.StatusCode != http.StatusOK {
		t.Fatalf("%s %s: HTTP %d %q, want 200 and xxl-job's JSON", method, path, res.StatusCode, data)
	}
	return reply.Code, reply.Msg
}

func (j *javaExecutor) register(t *testing.T, app string) (int, any) {
	t.Helper()
	return j.post(t, http.MethodPost, "/api/registry",
		fmt.Sprintf(`{"registryGroup":"EXECUTOR","registryKey":%q,"registryValue":%q}`, app, j.address), nil)
}

// callback reports one result as 3.5 does.
func (j *javaExecutor) callback(t *testing.T, logID int64, code int, msg string) {
	t.Helper()
	body := fmt.Sprintf(`{"callbackList":[{"logId":%d,"logDateTime":%d,"handleCode":%d,"handleMsg":%q}]}`, logID, time.Now().UnixMilli(), code, msg)
	if c, m := j.post(t, http.MethodPost, "/api/callback", body, nil); c != 200 || m != nil {
		t.Fatalf("callback: %d %v, want 200 and a null msg", c, m)
	}
}

// trigger runs job once and returns its run id, once the double has it.
func (j *javaExecutor) trigger(t *testing.T, c clients, jobID int64) int64 {
	t.Helper()
	res, err := c.job.TriggerJob(context.Background(), &carillonv1.TriggerJobRequest{JobId: jobID})
	if err != nil {
		t.Fatal(err)
	}
	select {
	case id := <-j.triggered:
		if id != res.RunIds[0] {
			t.Fatalf("the executor got logId %d, want run %d", id, res.RunIds[0])
		}
	case <-time.After(10 * time.Second):
		t.Fatalf("run %d did not reach the executor in 10 s", res.RunIds[0])
	}
	return res.RunIds[0]
}

// waitRun waits until run id is no longer RUNNING and returns it.
func waitRun(t *testing.T, c clients, id int64) *carillonv1.Run {
	t.Helper()
	var run *carillonv1.Run
	eventually(t, c.url, 10*time.Second, func() error {
		res, err := c.run.GetRun(context.Background(), &carillonv1.GetRunRequest{Id: id})
		if err != nil {
			return err
		}
		run = res.Run
		if run.Status == carillonv1.RunStatus_RUN_STATUS_RUNNING {
			return fmt.Errorf("run %d is still RUNNING", id)
		}
		return nil
	})
	return run
}

// TestXXLJobJavaExecutor drives a Carillon admin with a double of an
// xxl-job 3.5 Java executor: registration with the APPNAME header, runs
// sent to /trigger once /run is unknown, results of each handle code, a
// repeated callback ignored, a log read, a kill, the callback bodies of
// every version, the answers to bad calls, registration into a Carillon
// group refused, the script gate, and registryRemove.
func TestXXLJobJavaExecutor(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	a := startAdmin(t)
	c := newClients(a.URL, http.DefaultClient)
	g, err := c.group.CreateGroup(ctx, &carillonv1.CreateGroupRequest{Group: &carillonv1.Group{
		AppName: "java-app", ExecutorProtocol: carillonv1.ExecutorProtocol_EXECUTOR_PROTOCOL_XXL_JOB}})
	if err != nil {
		t.Fatal(err)
	}
	j := startJavaExecutor(t, a.URL, "java-app")
	if code, msg := j.register(t, "java-app"); code != 200 || msg != nil {
		t.Fatalf("registry: %d %v, want 200 and a null msg", code, msg)
	}
	waitAddresses(t, c, g.Group.Id, j.address)
	none := &carillonv1.Schedule{Type: carillonv1.ScheduleType_SCHEDULE_TYPE_NONE}
	job := createJob(t, c, &carillonv1.Job{GroupId: g.Group.Id, Description: "java", Handler: "demoJobHandler", Param: "x",
		Schedule: none, RouteStrategy: carillonv1.RouteStrategy_ROUTE_STRATEGY_FAILOVER, TimeoutSeconds: 5})

	t.Run("Results", func(t *testing.T) {
		for _, tt := range []struct {
			code   int
			msg    string
			status carillonv1.RunStatus
		}{
			{200, "done", carillonv1.RunStatus_RUN_STATUS_SUCCEEDED},
			{502, "job execute timeout ", carillonv1.RunStatus_RUN_STATUS_TIMED_OUT},
			{500, "java.lang.RuntimeException: boom", carillonv1.RunStatus_RUN_STATUS_FAILED},
		} {
			id := j.trigger(t, c, job.Id)
			j.mu.Lock()
			p := j.triggers[id]
			j.mu.Unlock()
			if p["jobId"] != float64(job.Id) || p["executorHandler"] != "demoJobHandler" || p["executorParams"] != "x" ||
				p["executorTimeout"] != float64(5) || p["glueType"] != "BEAN" || p["broadcastTotal"] != float64(1) {
				t.Errorf("run %d: the executor got %v", id, p)
			}
			j.callback(t, id, tt.code, tt.msg)
			if run := waitRun(t, c, id); run.Status != tt.status || run.Message != tt.msg {
				t.Errorf("code %d: run %d is %s %q, want %s %q", tt.code, id, run.Status, run.Message, tt.status, tt.msg)
			}
			// The same callback again changes nothing; with another
			// outcome, the run keeps its status and notes it.
			j.callback(t, id, tt.code, tt.msg)
			if run := waitRun(t, c, id); run.Status != tt.status || run.Message != tt.msg {
				t.Errorf("code %d: after a repeated callback run %d is %s %q", tt.code, id, run.Status, run.Message)
			}
			j.callback(t, id, 500, "again")
			if run := waitRun(t, c, id); run.Status != tt.status || !strings.HasPrefix(run.Message, tt.msg+" [a later result was not applied: FAILED at ") ||
				!strings.HasSuffix(run.Message, ": again]") {
				t.Errorf("code %d: after a callback with another outcome run %d is %s %q, want %s noting it", tt.code, id, run.Status, run.Message, tt.status)
			}
		}
	})

	t.Run("LogAndKill", func(t *testing.T) {
		id := j.trigger(t, c, job.Id)
		run := waitRunning(t, c, id)
		page, err := c.run.ReadRunLog(ctx, &carillonv1.ReadRunLogRequest{RunId: id, FromLine: 1})
		if err != nil {
			t.Fatal(err)
		}
		if want := fmt.Sprintf("log %d\nline 2\n", id); page.Content != want || page.ToLine != 2 || page.End {
			t.Errorf("log page %v, want %q to line 2, not ended", page, want)
		}
		j.mu.Lock()
		last := j.logReqs[len(j.logReqs)-1]
		j.mu.Unlock()
		if last["logId"] != float64(id) || last["logDateTime"] != float64(run.ScheduledAt.AsTime().UnixMilli()) || last["fromLineNum"] != float64(1) {
			t.Errorf("the executor's log request %v, want logId %d, logDateTime of the run", last, id)
		}
		if _, err := c.run.KillRun(ctx, &carillonv1.KillRunRequest{RunId: id}); err != nil {
			t.Fatal(err)
		}
		// A 3.5 executor then reports the killed run as failed.
		j.callback(t, id, 500, "killed by the admin [job running, killed]")
		if run := waitRun(t, c, id); run.Status != carillonv1.RunStatus_RUN_STATUS_KILLED {
			t.Errorf("run %d is %s, want KILLED", id, run.Status)
		}
		j.mu.Lock()
		defer j.mu.Unlock()
		if len(j.kills) != 1 || j.kills[0] != job.Id {
			t.Errorf("kills %v, want [%d]", j.kills, job.Id)
		}
	})

	t.Run("CallbackVersions", func(t *testing.T) {
		files, err := filepath.Glob("internal/xxljob/testdata/callback/*.json")
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, f := range files {
			if strings.HasSuffix(f, ".golden.json") {
				continue
			}
			n++
			body, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			golden, err := os.ReadFile(strings.TrimSuffix(f, ".json") + ".golden.json")
			if err != nil {
				t.Fatal(err)
			}
			var want struct {
				Results []struct{ Status, Message string }
			}
			if err := json.Unmarshal(golden, &want); err != nil || len(want.Results) != 1 {
				t.Fatalf("%s: %v", f, err)
			}
			id := j.trigger(t, c, job.Id)
			headers := map[string]string{"XXL-JOB-ACCESS-TOKEN": token} // before 3.5: no app name
			if strings.HasSuffix(f, "3.5.json") {
				headers = nil
			}
			code, msg := j.post(t, http.MethodPost, "/api/callback", strings.ReplaceAll(string(body), "LOGID", strconv.FormatInt(id, 10)), headers)
			if code != 200 {
				t.Errorf("%s: callback %d %v", f, code, msg)
			}
			if run := waitRun(t, c, id); run.Status.String() != want.Results[0].Status || run.Message != want.Results[0].Message {
				t.Errorf("%s: run %d is %s %q, want %s %q", f, id, run.Status, run.Message, want.Results[0].Status, want.Results[0].Message)
			}
		}
		if n < 9 {
			t.Errorf("%d callback fixtures, want one per version (9)", n)
		}
	})

	t.Run("BadCalls", func(t *testing.T) {
		reg := fmt.Sprintf(`{"registryGroup":"EXECUTOR","registryKey":"java-app","registryValue":%q}`, j.address)
		classic := map[string]string{"XXL-JOB-ACCESS-TOKEN": token}
		for _, tt := range []struct {
			name, method, path, body string
			headers                  map[string]string
			msg                      string
		}{
			{"Method", http.MethodGet, "/api/registry", "", nil, "invalid request, HttpMethod not support."},
			{"URIEmpty", http.MethodPost, "/api/", reg, nil, "invalid request, uri-mapping empty."},
			{"BodyEmpty", http.MethodPost, "/api/registry", "", nil, "invalid request, requestBody empty."},
			{"UnknownURI", http.MethodPost, "/api/addJob", reg, nil, "invalid request, uri-mapping(addJob) not found."},
			{"Blank", http.MethodPost, "/api/registry", `{"registryGroup":"EXECUTOR","registryKey":" ","registryValue":"http://x/"}`, nil, "Illegal Argument."},
			{"TokenClassic", http.MethodPost, "/api/registry", reg, map[string]string{"XXL-JOB-ACCESS-TOKEN": "wrong"}, "The access token is wrong."},
			{"NoTokenClassic", http.MethodPost, "/xxl-job-admin/api/registry", reg, map[string]string{}, "The access token is wrong."},
			{"Token35", http.MethodPost, "/api/registry", reg, map[string]string{"XXL-JOB-ACCESS-TOKEN": "wrong", "XXL-JOB-APPNAME": "java-app"}, "invalid request, accessToken or appname invalid."},
			{"NoToken35", http.MethodPost, "/api/registry", reg, map[string]string{"XXL-JOB-APPNAME": "java-app"}, "invalid request, accessToken or appname is empty."},
			{"CallbackToken", http.MethodPost, "/api/callback", `[{"logId":1,"handleCode":200}]`, map[string]string{"XXL-JOB-ACCESS-TOKEN": "wrong"}, "The access token is wrong."},
		} {
			before := listRuns(t, c, job.Id)
			if code, msg := j.post(t, tt.method, tt.path, tt.body, tt.headers); code != 500 || msg != tt.msg {
				t.Errorf("%s: %d %v, want 500 %q", tt.name, code, msg, tt.msg)
			}
			if after := listRuns(t, c, job.Id); describeRuns(after) != describeRuns(before) {
				t.Errorf("%s: a refused call changed the runs", tt.name)
			}
		}
		// The legacy context path works as the new one.
		if code, msg := j.post(t, http.MethodPost, "/xxl-job-admin/api/registry", reg, classic); code != 200 {
			t.Errorf("/xxl-job-admin/api/registry: %d %v", code, msg)
		}
	})

	t.Run("CarillonGroupRefuses", func(t *testing.T) {
		cg, err := c.group.CreateGroup(ctx, &carillonv1.CreateGroupRequest{Group: &carillonv1.Group{AppName: "go-app"}})
		if err != nil {
			t.Fatal(err)
		}
		code, msg := j.post(t, http.MethodPost, "/api/registry",
			fmt.Sprintf(`{"registryGroup":"EXECUTOR","registryKey":"go-app","registryValue":%q}`, j.address), map[string]string{"XXL-JOB-ACCESS-TOKEN": token})
		if s, _ := msg.(string); code != 500 || !strings.Contains(s, "EXECUTOR_PROTOCOL_CARILLON") {
			t.Errorf("registry into a Carillon group: %d %v, want 500 naming the group's protocol", code, msg)
		}
		res, err := c.group.GetGroup(ctx, &carillonv1.GetGroupRequest{Id: cg.Group.Id})
		if err != nil || len(res.Group.Addresses) != 0 {
			t.Errorf("the Carillon group has executors %v (%v), want none", res.GetGroup().GetAddresses(), err)
		}
	})

	t.Run("Scripts", func(t *testing.T) {
		script := createJob(t, c, &carillonv1.Job{GroupId: g.Group.Id, Description: "shell", Schedule: none,
			Script: &carillonv1.Script{Type: carillonv1.ScriptType_SCRIPT_TYPE_SHELL, Source: "echo hi"}})
		res, err := c.job.TriggerJob(ctx, &carillonv1.TriggerJobRequest{JobId: script.Id})
		if err != nil {
			t.Fatal(err)
		}
		if run := waitRun(t, c, res.RunIds[0]); run.Status != carillonv1.RunStatus_RUN_STATUS_FAILED || !strings.Contains(run.Message, "not sent") ||
			run.ExecutorAddress != "" {
			t.Errorf("a script run of a group without scripts: %s %q on %q, want FAILED not sent", run.Status, run.Message, run.ExecutorAddress)
		}
		if _, err := c.group.UpdateGroup(ctx, &carillonv1.UpdateGroupRequest{Group: &carillonv1.Group{Id: g.Group.Id, AllowScripts: true},
			UpdateMask: &fieldmaskpb.FieldMask{Paths: []string{"allow_scripts"}}}); err != nil {
			t.Fatal(err)
		}
		id := j.trigger(t, c, script.Id)
		j.mu.Lock()
		p := j.triggers[id]
		j.mu.Unlock()
		if p["glueType"] != "GLUE_SHELL" || p["glueSource"] != "echo hi" {
			t.Errorf("a script run of a group with scripts: the executor got %v", p)
		}
		j.callback(t, id, 200, "")
		if run := waitRun(t, c, id); run.Status != carillonv1.RunStatus_RUN_STATUS_SUCCEEDED {
			t.Errorf("script run %d is %s", id, run.Status)
		}
	})

	t.Run("RegistryRemove", func(t *testing.T) {
		body := fmt.Sprintf(`{"registryGroup":"EXECUTOR","registryKey":"java-app","registryValue":%q}`, j.address)
		if code, msg := j.post(t, http.MethodPost, "/api/registryRemove", body, nil); code != 200 || msg != nil {
			t.Fatalf("registryRemove: %d %v", code, msg)
		}
		res, err := c.group.GetGroup(ctx, &carillonv1.GetGroupRequest{Id: g.Group.Id})
		if err != nil || len(res.Group.Addresses) != 0 {
			t.Errorf("after registryRemove the group has %v (%v), want none", res.GetGroup().GetAddresses(), err)
		}
	})
}

// waitRunning returns run id once the admin has recorded where it went.
func waitRunning(t *testing.T, c clients, id int64) *carillonv1.Run {
	t.Helper()
	var run *carillonv1.Run
	eventually(t, c.url, 10*time.Second, func() error {
		res, err := c.run.GetRun(context.Background(), &carillonv1.GetRunRequest{Id: id})
		if err != nil {
			return err
		}
		if run = res.Run; run.ExecutorAddress == "" {
			return errors.New("the run's executor is not recorded yet")
		}
		return nil
	})
	return run
}
