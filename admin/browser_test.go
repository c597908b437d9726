package admin_test

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/input"
	cdplog "github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	carillonv1 "github.com/carillonhq/carillon/proto/carillon/v1"
	"github.com/carillonhq/carillon/sdk"
)

// browser is headless Chromium (Debian's chromium, never a download)
// driving the console of a real admin, collecting what the page logs as
// errors (a CSP violation among them).
type browser struct {
	ctx    context.Context
	url    string
	mu     sync.Mutex
	errors []string
}

// newBrowser starts Chromium on a fresh profile for the admin at url. It
// skips the test when no Chromium is installed, unless
// CARILLON_BROWSER_TESTS=1 (set by .ci/run, which installs it) says the
// browser tests must run.
func newBrowser(t testing.TB, url string) *browser {
	t.Helper()
	path, err := exec.LookPath("chromium")
	if err != nil {
		if os.Getenv("CARILLON_BROWSER_TESTS") == "1" {
			t.Fatal("CARILLON_BROWSER_TESTS=1 but no chromium on PATH: apt-get install chromium")
		}
		t.Skip("no chromium on PATH (apt-get install chromium, or run .ci/run): browser tests skipped")
	}
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(path), chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU, chromedp.NoFirstRun,
		chromedp.NoDefaultBrowserCheck, chromedp.UserDataDir(t.TempDir()), chromedp.WindowSize(1280, 900),
		chromedp.Flag("disable-quic", true), chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true), chromedp.Flag("disable-sync", true),
		chromedp.Flag("lang", "en-US"),
	}
	alloc, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(alloc)
	ctx, cancelTimeout := context.WithTimeout(ctx, 90*time.Second)
	t.Cleanup(func() { cancelTimeout(); cancel(); cancelAlloc() })
	b := &browser{ctx: ctx, url: url}
	chromedp.ListenTarget(ctx, func(ev any) {
		var msg string
		switch e := ev.(type) {
		case *runtime.EventExceptionThrown:
			msg = e.ExceptionDetails.Text
			if e.ExceptionDetails.Exception != nil {
				msg += " " + e.ExceptionDetails.Exception.Description
			}
		case *cdplog.EventEntryAdded:
			// An API refusal (4xx) is the page's to show, not an error of it.
			refusal := e.Entry.Source == cdplog.SourceNetwork && strings.Contains(e.Entry.Text, "status of 4")
			if e.Entry.Level == cdplog.LevelError && !refusal {
				msg = string(e.Entry.Source) + ": " + e.Entry.Text
			}
		}
		if msg != "" {
			b.mu.Lock()
			b.errors = append(b.errors, msg)
			b.mu.Unlock()
		}
	})
	if err := chromedp.Run(ctx, cdplog.Enable()); err != nil {
		t.Fatal(err)
	}
	return b
}

// run runs actions, failing the test with what failed.
func (b *browser) run(t testing.TB, what string, actions ...chromedp.Action) {
	t.Helper()
	if err := chromedp.Run(b.ctx, actions...); err != nil {
		b.screenshot(t, "failed-"+strings.ReplaceAll(what, " ", "-"))
		t.Fatalf("%s: %v", what, err)
	}
}

// screenshot saves the page as artifacts/screenshots/<name>.png at the
// repository's root (not committed).
func (b *browser) screenshot(t testing.TB, name string) {
	t.Helper()
	var png []byte
	if err := chromedp.Run(b.ctx, chromedp.FullScreenshot(&png, 100)); err != nil {
		t.Logf("screenshot %s: %v", name, err)
		return
	}
	dir := filepath.Join("..", "artifacts", "screenshots")
	if err := os.MkdirAll(dir, 0o755); err == nil {
		if err := os.WriteFile(filepath.Join(dir, name+".png"), png, 0o644); err != nil {
			t.Error(err)
		}
	}
}

// noErrors fails the test if the page logged an error (a refused script or
// style under the CSP shows here).
func (b *browser) noErrors(t *testing.T) {
	t.Helper()
	b.mu.Lock()
	defer b.mu.Unlock()
	if len(b.errors) > 0 {
		t.Errorf("the page logged errors: %q", b.errors)
	}
}

// signIn signs in through the page's form.
func (b *browser) signIn(t testing.TB, user, password string) {
	t.Helper()
	b.run(t, "sign in "+user,
		chromedp.Navigate(b.url+"/"),
		chromedp.WaitVisible(`input[name=username]`),
		chromedp.SendKeys(`input[name=username]`, user),
		chromedp.SendKeys(`input[name=password]`, password),
		chromedp.Click(`button[type=submit]`),
		chromedp.WaitVisible(`[data-testid=whoami]`),
	)
}

// setValue sets a React-controlled input, textarea or select to value, as
// typing or choosing would (React listens to input and change events).
func setValue(sel, value string) chromedp.Action {
	return chromedp.Tasks{chromedp.WaitVisible(sel), chromedp.Evaluate(fmt.Sprintf(`(() => {
		const el = document.querySelector(%q);
		const proto = el.tagName === "SELECT" ? HTMLSelectElement.prototype : el.tagName === "TEXTAREA" ? HTMLTextAreaElement.prototype : HTMLInputElement.prototype;
		Object.getOwnPropertyDescriptor(proto, "value").set.call(el, %q);
		el.dispatchEvent(new Event(el.tagName === "SELECT" ? "change" : "input", { bubbles: true }));
	})()`, sel, value), nil)}
}

// textOf waits for sel and returns its text.
func textOf(sel string, out *string) chromedp.Action {
	return chromedp.Tasks{chromedp.WaitVisible(sel), chromedp.Text(sel, out)}
}

// TestConsoleInBrowser drives the embedded console in headless Chromium
// against a real admin and a real SDK executor: sign in, see the
// executor online, run a job once and watch its run succeed and read its
// log, kill a long run, switch to Chinese; a VIEWER sees no write
// controls; a MEMBER sees only their group's jobs. It saves a screenshot of
// each page.
func TestConsoleInBrowser(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	a := startAdmin(t)
	b := newBrowser(t, a.url)
	c := newClients(a.url, http.DefaultClient)
	b.signIn(t, "admin", adminPassword)
	b.run(t, "create a group",
		chromedp.Navigate(a.url+"/#/groups"),
		chromedp.Click(`//button[text()="New group"]`, chromedp.BySearch),
		setValue(`input[name=app_name]`, "web"),
		setValue(`input[name=title]`, "Web team"),
		chromedp.Click(`//form[@aria-label="group"]//button[text()="Create"]`, chromedp.BySearch),
		chromedp.WaitVisible(`//td[text()="web"]`, chromedp.BySearch),
	)
	groups, err := c.group.ListGroups(ctx, &carillonv1.ListGroupsRequest{})
	if err != nil || len(groups.Groups) != 1 || groups.Groups[0].Title != "Web team" {
		t.Fatalf("groups after creating one in the console: %v, %v", groups, err)
	}
	g := &carillonv1.GetGroupResponse{Group: groups.Groups[0]}
	other, err := c.group.CreateGroup(ctx, &carillonv1.CreateGroupRequest{Group: &carillonv1.Group{AppName: "other", Title: "Other team"}})
	if err != nil {
		t.Fatal(err)
	}
	release := make(chan struct{})
	defer close(release)
	exURL := startExecutor(t, a.url, "web", func(ex *sdk.Executor) {
		ex.HandleFunc("wait", func(ctx context.Context, job *sdk.Job) error {
			job.Logf("waiting")
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-release:
				return nil
			}
		})
	})
	none := &carillonv1.Schedule{Type: carillonv1.ScheduleType_SCHEDULE_TYPE_NONE}
	job := createJob(t, c, &carillonv1.Job{GroupId: g.Group.Id, Description: "say hello", Handler: "ok", Schedule: none})
	long := createJob(t, c, &carillonv1.Job{GroupId: g.Group.Id, Description: "wait long", Handler: "wait", Schedule: none})
	createJob(t, c, &carillonv1.Job{GroupId: other.Group.Id, Description: "other team's job", Handler: "ok", Schedule: none})

	b.run(t, "dashboard", chromedp.Click(`//nav//a[text()="Dashboard"]`, chromedp.BySearch), chromedp.WaitVisible(`figure`))
	b.screenshot(t, "dashboard")
	var executors string
	b.run(t, "groups page shows the executor",
		chromedp.Navigate(a.url+"/#/groups"),
		chromedp.Poll(fmt.Sprintf(`document.querySelector('[data-testid="executors-web"]')?.textContent.includes(%q)`, exURL), nil,
			chromedp.WithPollingTimeout(20*time.Second)),
		chromedp.Text(`[data-testid="executors-web"]`, &executors),
	)
	b.screenshot(t, "groups")

	// Create a job with the form: the preview follows the cron as it is
	// typed, a bad cron says why, and a missing handler is shown on its field.
	var preview string
	b.run(t, "new job form",
		chromedp.Navigate(a.url+"/#/jobs"),
		chromedp.Click(`//button[text()="New job"]`, chromedp.BySearch),
		setValue(`select[name=group_id]`, fmt.Sprint(g.Group.Id)),
		setValue(`input[name=description]`, "made in the browser"),
		setValue(`input[name=cron]`, "0 15 10 ? * 6#3"),
		setValue(`input[name=time_zone]`, "Europe/Berlin"),
		chromedp.Poll(`document.querySelectorAll('[data-testid=preview] li').length === 5 && document.querySelector('[data-testid=preview]').textContent.includes("10:15")`, nil,
			chromedp.WithPollingTimeout(10*time.Second)),
		chromedp.Text(`[data-testid=preview]`, &preview),
	)
	b.screenshot(t, "job-form")
	b.run(t, "a bad cron in the preview",
		setValue(`input[name=cron]`, "0 15 10 ? * 9#9"),
		chromedp.WaitVisible(`[data-testid=preview-error]`),
		setValue(`input[name=cron]`, "*/10 * * * * ?"),
		chromedp.WaitNotPresent(`[data-testid=preview-error]`),
		chromedp.Click(`//button[text()="Create"]`, chromedp.BySearch),
		chromedp.WaitVisible(`[data-field-error=handler]`),
		setValue(`input[name=handler]`, "ok"),
		// The admin names a JSON request's fields as JSON does
		// (job.retryCount); the form maps the name back to its input.
		setValue(`input[name=retry_count]`, "101"),
		chromedp.Click(`//button[text()="Create"]`, chromedp.BySearch),
		chromedp.WaitVisible(`[data-field-error=retry_count]`),
		setValue(`input[name=retry_count]`, "0"),
		setValue(`select[name=script_type]`, "1"), // SHELL: the code editor loads
		chromedp.WaitVisible(`.cm-editor .cm-content`),
		chromedp.Click(`.cm-editor .cm-content`),
		input.InsertText("echo made in the browser"),
	)
	b.screenshot(t, "job-form-script")
	b.run(t, "create the job",
		chromedp.Click(`//button[text()="Create"]`, chromedp.BySearch),
		chromedp.WaitVisible(`//td[text()="made in the browser"]`, chromedp.BySearch),
	)
	made, err := c.job.ListJobs(ctx, &carillonv1.ListJobsRequest{Text: "made in the browser"})
	if err != nil || len(made.Jobs) != 1 || made.Jobs[0].Script.GetSource() != "echo made in the browser" ||
		made.Jobs[0].Schedule.GetCron() != "*/10 * * * * ?" || made.Jobs[0].Schedule.GetTimeZone() != "Europe/Berlin" {
		t.Fatalf("the job made in the console: %v, %v; script %q", made, err, made.GetJobs()[0].GetScript().GetSource())
	}

	// Run "say hello" once from its row; its run succeeds and its log reads.
	b.run(t, "run a job once",
		chromedp.Navigate(a.url+"/#/jobs"),
		chromedp.WaitVisible(fmt.Sprintf(`//tr[td[1][text()="%d"]]//button[text()="Run once"]`, job.Id), chromedp.BySearch),
		chromedp.Click(fmt.Sprintf(`//tr[td[1][text()="%d"]]//button[text()="Run once"]`, job.Id), chromedp.BySearch),
		chromedp.WaitVisible(`[role=status]`),
	)
	b.screenshot(t, "jobs")
	runs := listRuns(t, c, job.Id)
	if len(runs) != 1 {
		t.Fatalf("runs of the job after Run once: %v", runs)
	}
	var log string
	b.run(t, "the run succeeds and its log reads",
		chromedp.Navigate(fmt.Sprintf("%s/#/runs?job=%d&run=%d", a.url, job.Id, runs[0].Id)),
		chromedp.Poll(fmt.Sprintf(`document.querySelector('[data-testid="status-%d"]')?.textContent === "SUCCEEDED"`, runs[0].Id), nil,
			chromedp.WithPollingTimeout(20*time.Second)),
		chromedp.Poll(`document.querySelector('[data-testid="run-log"]')?.textContent.includes("ok run")`, nil,
			chromedp.WithPollingTimeout(20*time.Second)),
		chromedp.Text(`[data-testid="run-log"]`, &log),
	)
	b.screenshot(t, "run-log")

	// Kill a long run from the runs page.
	trig, err := c.job.TriggerJob(ctx, &carillonv1.TriggerJobRequest{JobId: long.Id})
	if err != nil {
		t.Fatal(err)
	}
	killSel := fmt.Sprintf(`//tr[td[1]/a[text()="%d"]]//button[text()="Kill"]`, trig.RunIds[0])
	b.run(t, "kill a long run",
		chromedp.Navigate(fmt.Sprintf("%s/#/runs?job=%d", a.url, long.Id)),
		chromedp.WaitVisible(killSel, chromedp.BySearch),
		chromedp.Click(killSel, chromedp.BySearch),
		chromedp.Poll(fmt.Sprintf(`document.querySelector('[data-testid="status-%d"]')?.textContent === "KILLED"`, trig.RunIds[0]), nil,
			chromedp.WithPollingTimeout(20*time.Second)),
	)
	b.screenshot(t, "runs")

	b.run(t, "users page", chromedp.Navigate(a.url+"/#/users"), chromedp.WaitVisible(`//td[text()="admin"]`, chromedp.BySearch))
	b.screenshot(t, "users")

	// A phone: the page does not overflow sideways (wide tables scroll in
	// their own box).
	var fits bool
	b.run(t, "phone width",
		chromedp.EmulateViewport(390, 844, chromedp.EmulateMobile),
		chromedp.Navigate(a.url+"/#/jobs"),
		chromedp.WaitVisible(`main tbody tr`),
		chromedp.Evaluate(`document.documentElement.scrollWidth <= window.innerWidth`, &fits),
	)
	b.screenshot(t, "jobs-phone")
	if !fits {
		t.Error("the jobs page is wider than a phone's screen")
	}
	b.run(t, "back to a laptop", chromedp.EmulateViewport(1280, 900))

	// Chinese.
	var nav string
	b.run(t, "switch to Chinese",
		chromedp.Navigate(a.url+"/#/jobs"),
		chromedp.WaitVisible(`//button[text()="中文"]`, chromedp.BySearch),
		chromedp.Click(`//button[text()="中文"]`, chromedp.BySearch),
		textOf(`nav[aria-label=main]`, &nav),
	)
	if !strings.Contains(nav, "任务管理") || !strings.Contains(nav, "调度日志") {
		t.Errorf("navigation after switching to Chinese: %q", nav)
	}
	b.screenshot(t, "jobs-zh")
	b.run(t, "back to English", chromedp.Click(`//button[text()="English"]`, chromedp.BySearch))
	b.noErrors(t)

	// A group of xxl-job executors that may be sent scripts, made with the
	// form; the table says so.
	var protocol string
	b.run(t, "create an xxl-job group",
		chromedp.Navigate(a.url+"/#/groups"),
		chromedp.Click(`//button[text()="New group"]`, chromedp.BySearch),
		setValue(`input[name=app_name]`, "legacy"),
		setValue(`select[name=executor_protocol]`, fmt.Sprint(int32(carillonv1.ExecutorProtocol_EXECUTOR_PROTOCOL_XXL_JOB))),
		chromedp.Click(`input[name=allow_scripts]`),
		chromedp.Click(`//form[@aria-label="group"]//button[text()="Create"]`, chromedp.BySearch),
		textOf(`[data-testid="protocol-legacy"]`, &protocol),
	)
	if protocol != "xxl-job + scripts" {
		t.Errorf("the legacy group's protocol column: %q, want %q", protocol, "xxl-job + scripts")
	}
	all, err := c.group.ListGroups(ctx, &carillonv1.ListGroupsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	for _, lg := range all.Groups {
		if lg.AppName == "legacy" && (lg.ExecutorProtocol != carillonv1.ExecutorProtocol_EXECUTOR_PROTOCOL_XXL_JOB || !lg.AllowScripts) {
			t.Errorf("the group made in the console: %v, want XXL_JOB with scripts", lg)
		}
	}
	b.screenshot(t, "groups-xxl-job")

	// A VIEWER sees no write controls.
	newUser(t, a.url, &carillonv1.User{Username: "vera", Role: carillonv1.Role_ROLE_VIEWER})
	v := newBrowser(t, a.url)
	v.signIn(t, "vera", "a member's password")
	var buttons []*cdp.Node
	v.run(t, "viewer's jobs page",
		chromedp.Navigate(a.url+"/#/jobs"),
		chromedp.WaitVisible(fmt.Sprintf(`//td[text()="%d"]`, job.Id), chromedp.BySearch),
		chromedp.Nodes(`//button[text()="Run once" or text()="Start" or text()="Stop"]`, &buttons, chromedp.BySearch, chromedp.AtLeast(0)),
	)
	if len(buttons) != 0 {
		t.Errorf("a VIEWER sees %d write buttons on the jobs page", len(buttons))
	}
	v.screenshot(t, "jobs-viewer")

	// A MEMBER of "web" sees only its jobs.
	newUser(t, a.url, &carillonv1.User{Username: "mia", Role: carillonv1.Role_ROLE_MEMBER, GroupIds: []int64{g.Group.Id}})
	m := newBrowser(t, a.url)
	m.signIn(t, "mia", "a member's password")
	var table string
	m.run(t, "member's jobs page",
		chromedp.Navigate(a.url+"/#/jobs"),
		chromedp.WaitVisible(fmt.Sprintf(`//td[text()="%d"]`, job.Id), chromedp.BySearch),
		chromedp.Text(`table`, &table),
	)
	if strings.Contains(table, "other team's job") || !strings.Contains(table, "say hello") {
		t.Errorf("a MEMBER of web sees: %q", table)
	}
	m.screenshot(t, "jobs-member")
	v.noErrors(t)
	m.noErrors(t)
}
