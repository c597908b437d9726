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
	"github.com/chromedp/cdproto/target"
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

// chromium is the one headless Chromium this package's tests share; each
// test gets its own browser context in it (cookies and storage of its
// own, as a fresh profile would have), so a test costs a tab, not a
// browser start (1.4 s each on 2 cores).
var chromium struct {
	once    sync.Once
	ctx     context.Context // the browser's first tab; parent of every test's context
	err     error
	profile string
	stop    func()
}

// startChromium starts the shared Chromium at path once.
func startChromium(path string) (context.Context, error) {
	chromium.once.Do(func() {
		profile, err := os.MkdirTemp("", "carillon-chromium-")
		if err != nil {
			chromium.err = err
			return
		}
		opts := []chromedp.ExecAllocatorOption{
			chromedp.ExecPath(path), chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU, chromedp.NoFirstRun,
			chromedp.NoDefaultBrowserCheck, chromedp.UserDataDir(profile), chromedp.WindowSize(1280, 900),
			chromedp.Flag("disable-quic", true), chromedp.Flag("disable-background-networking", true),
			chromedp.Flag("disable-component-update", true), chromedp.Flag("disable-sync", true),
			chromedp.Flag("lang", "en-US"),
		}
		alloc, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
		ctx, cancel := chromedp.NewContext(alloc)
		chromium.ctx, chromium.profile = ctx, profile
		chromium.stop = func() { cancel(); cancelAlloc() }
		chromium.err = chromedp.Run(ctx) // starts the browser
	})
	return chromium.ctx, chromium.err
}

// stopChromium ends the shared Chromium, if one was started, and removes
// its profile once Chromium's last process has let go of it (a helper
// process may still write there just after the browser exits): polled,
// bounded.
func stopChromium() {
	if chromium.stop == nil {
		return
	}
	chromium.stop()
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		if err := os.RemoveAll(chromium.profile); err == nil || time.Now().After(deadline) {
			return
		}
	}
}

// newBrowser opens a fresh browser context (a new profile's worth of
// cookies and storage) in the shared Chromium for the admin at url. The
// browser tests are a tier of their own, like the soak tier: they take
// most of a minute of CPU, so they run only with CARILLON_BROWSER_TESTS=1
// (.ci/run sets it, and installs Debian's chromium), which fails them
// when no chromium is installed; otherwise they skip, saying so.
func newBrowser(t testing.TB, url string) *browser {
	t.Helper()
	if os.Getenv("CARILLON_BROWSER_TESTS") != "1" {
		t.Skip("browser tests: skipped; they run with CARILLON_BROWSER_TESTS=1 (.ci/run sets it), in Debian's chromium")
	}
	path, err := exec.LookPath("chromium")
	if err != nil {
		t.Fatal("CARILLON_BROWSER_TESTS=1 but no chromium on PATH: apt-get install chromium")
	}
	parent, err := startChromium(path)
	if err != nil {
		t.Fatalf("starting chromium: %v", err)
	}
	// A browser context and its first tab, made by hand: headless Chromium
	// opens a tab in a new browser context only in a window of its own,
	// which chromedp.WithNewBrowserContext does not ask for.
	browserCtx := cdp.WithExecutor(parent, chromedp.FromContext(parent).Browser)
	id, err := target.CreateBrowserContext().WithDisposeOnDetach(true).Do(browserCtx)
	if err != nil {
		t.Fatalf("a browser context: %v", err)
	}
	tab, err := target.CreateTarget("about:blank").WithBrowserContextID(id).WithNewWindow(true).Do(browserCtx)
	if err != nil {
		t.Fatalf("a tab: %v", err)
	}
	ctx, cancel := chromedp.NewContext(parent, chromedp.WithTargetID(tab))
	ctx, cancelTimeout := context.WithTimeout(ctx, 90*time.Second)
	t.Cleanup(func() {
		cancelTimeout()
		cancel()
		if err := target.DisposeBrowserContext(id).Do(browserCtx); err != nil {
			t.Logf("disposing of the browser context: %v", err)
		}
	})
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
		b.shoot(t, "failed-"+strings.ReplaceAll(what, " ", "-"))
		b.mu.Lock()
		defer b.mu.Unlock()
		t.Fatalf("%s: %v; the page logged: %q", what, err, b.errors)
	}
}

// screenshot saves the page as artifacts/screenshots/<name>.png at the
// repository's root (not committed) when CARILLON_SCREENSHOTS is 1, as
// .ci/run sets it: each takes 0.1-0.2 s of the browser, a second or two
// of the suite. A failed step's screenshot is always taken (shoot).
func (b *browser) screenshot(t testing.TB, name string) {
	t.Helper()
	if os.Getenv("CARILLON_SCREENSHOTS") == "1" {
		b.shoot(t, name)
	}
}

// shoot saves the page as artifacts/screenshots/<name>.png.
func (b *browser) shoot(t testing.TB, name string) {
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

// fitsWidth waits up to 5 s for the page, and the table table names when
// it is not empty, to fit the window's width without a sideways scroll:
// after a viewport change the console lays out again on the resize event,
// so the first layout may still be the wider one. When it never fits, it
// logs the elements that stick out and saves a screenshot.
func (b *browser) fitsWidth(t testing.TB, name, table string) bool {
	t.Helper()
	expr := `document.documentElement.scrollWidth <= window.innerWidth`
	if table != "" {
		expr += fmt.Sprintf(` && document.querySelector('%[1]s').scrollWidth <= document.querySelector('%[1]s').clientWidth`, table)
	}
	var fits bool
	if err := chromedp.Run(b.ctx, chromedp.Poll(expr, &fits, chromedp.WithPollingTimeout(5*time.Second))); err == nil && fits {
		return true
	}
	var dims string
	_ = chromedp.Run(b.ctx, chromedp.Evaluate(`JSON.stringify({page: document.documentElement.scrollWidth, window: window.innerWidth,
		out: [...document.querySelectorAll('body *')].filter((e) => e.getBoundingClientRect().right > window.innerWidth).slice(0, 8)
			.map((e) => e.tagName + "." + e.className + " " + e.getBoundingClientRect().right)})`, &dims))
	t.Logf("%s: wider than the window: %s", name, dims)
	b.shoot(t, "wide-"+name)
	return false
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

// loadedList waits until the dashboard's list sel has its runs: a row or
// its "none" line (before its first answer it shows only its header).
func loadedList(sel string) chromedp.Action {
	return chromedp.Poll(`!!document.querySelector('`+sel+` tbody tr, `+sel+` p')`, nil, chromedp.WithPollingTimeout(20*time.Second))
}

// TestConsoleInBrowser drives the embedded console in headless Chromium
// against a real admin and a real SDK executor: sign in, see the
// executor online, run a job once and watch its run succeed and read its
// log, kill a long run, switch to Chinese. It saves a screenshot of each
// page.
func TestConsoleInBrowser(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	a := startAdmin(t)
	b := newBrowser(t, a.URL)
	c := newClients(a.URL, http.DefaultClient)
	b.signIn(t, "admin", adminPassword)
	b.run(t, "create a group",
		chromedp.Navigate(a.URL+"/#/groups"),
		chromedp.Click(`//button[text()="New group"]`, chromedp.BySearch),
		setValue(`input[name=app_name]`, "web"),
		setValue(`input[name=title]`, "Web team"),
		chromedp.Click(`//form[@aria-label="group"]//button[text()="Create"]`, chromedp.BySearch),
		chromedp.WaitVisible(`//td[text()="web"]`, chromedp.BySearch),
	)
	b.run(t, "create a calendar; a bad date is shown on its field",
		chromedp.Navigate(a.URL+"/#/calendars"),
		chromedp.Click(`//button[text()="New calendar"]`, chromedp.BySearch),
		setValue(`input[name=name]`, "holidays"),
		setValue(`textarea[name=excluded_dates]`, "2026-12-25\n2026-02-30"),
		chromedp.Click(`//form[@aria-label="calendar"]//button[text()="Create"]`, chromedp.BySearch),
		chromedp.WaitVisible(`[data-field-error=excluded_dates]`),
		setValue(`textarea[name=excluded_dates]`, "2026-12-25"),
		chromedp.Click(`//form[@aria-label="calendar"]//button[text()="Create"]`, chromedp.BySearch),
		chromedp.WaitVisible(`[data-testid="calendar-holidays"]`),
	)
	b.screenshot(t, "calendars")
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
	exURL := startExecutor(t, a.URL, "web", func(ex *sdk.Executor) {
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
		chromedp.Navigate(a.URL+"/#/groups"),
		chromedp.Poll(fmt.Sprintf(`document.querySelector('[data-testid="executors-web"]')?.textContent.includes(%q)`, exURL), nil,
			chromedp.WithPollingTimeout(20*time.Second)),
		chromedp.Text(`[data-testid="executors-web"]`, &executors),
	)
	b.screenshot(t, "groups")
	b.run(t, "pause and resume the group",
		chromedp.Click(`//tr[td[text()="web"]]//button[text()="Pause"]`, chromedp.BySearch),
		chromedp.WaitVisible(`[data-testid="paused-web"]`),
	)
	if got, err := c.group.GetGroup(ctx, &carillonv1.GetGroupRequest{Id: g.Group.Id}); err != nil || !got.Group.Paused {
		t.Errorf("group after Pause in the console: %v, %v; want paused", got, err)
	}
	b.run(t, "resume the group",
		chromedp.Click(`//tr[td[text()="web"]]//button[text()="Resume"]`, chromedp.BySearch),
		chromedp.WaitVisible(`//tr[td[text()="web"]]//button[text()="Pause"]`, chromedp.BySearch),
	)
	if got, err := c.group.GetGroup(ctx, &carillonv1.GetGroupRequest{Id: g.Group.Id}); err != nil || got.Group.Paused {
		t.Errorf("group after Resume in the console: %v, %v; want not paused", got, err)
	}
	// Start two jobs at once: their checkboxes, then Start selected.
	b.run(t, "start the selected jobs",
		chromedp.Navigate(a.URL+"/#/jobs"),
		chromedp.Click(fmt.Sprintf(`[data-testid="select-%d"]`, job.Id)),
		chromedp.Click(fmt.Sprintf(`[data-testid="select-%d"]`, long.Id)),
		chromedp.Click(`//*[@data-testid="batch"]//button[text()="Start selected"]`, chromedp.BySearch),
		chromedp.WaitNotPresent(`[data-testid="batch"]`),
	)
	for _, id := range []int64{job.Id, long.Id} {
		if got, err := c.job.GetJob(ctx, &carillonv1.GetJobRequest{Id: id}); err != nil || !got.Job.Enabled {
			t.Errorf("job %d after Start selected: %v, %v; want started", id, got, err)
		}
	}
	b.run(t, "stop them again",
		chromedp.Click(fmt.Sprintf(`[data-testid="select-%d"]`, job.Id)),
		chromedp.Click(fmt.Sprintf(`[data-testid="select-%d"]`, long.Id)),
		chromedp.Click(`//*[@data-testid="batch"]//button[text()="Stop selected"]`, chromedp.BySearch),
		chromedp.WaitNotPresent(`[data-testid="batch"]`),
	)
	for _, id := range []int64{job.Id, long.Id} {
		if got, err := c.job.GetJob(ctx, &carillonv1.GetJobRequest{Id: id}); err != nil || got.Job.Enabled {
			t.Errorf("job %d after Stop selected: %v, %v; want stopped", id, got, err)
		}
	}

	// Create a job with the form: the preview follows the cron as it is
	// typed, a bad cron says why, and a missing handler is shown on its field.
	var preview string
	b.run(t, "new job form",
		chromedp.Navigate(a.URL+"/#/jobs"),
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
	// The .proto's rules, read by the form: 86 Chinese characters are 258
	// bytes, over the description's 255 (and under an HTML maxlength of
	// 255, which counts UTF-16 units); said before anything is sent.
	var tooLong string
	b.run(t, "a description over its rule",
		setValue(`input[name=description]`, strings.Repeat("报", 86)),
		chromedp.Click(`//button[text()="Create"]`, chromedp.BySearch),
		textOf(`[data-field-error=description]`, &tooLong),
		setValue(`input[name=description]`, "made in the browser"),
	)
	if tooLong != "must be at most 255 bytes, got 258" {
		t.Errorf("the form's error for a 258-byte description: %q", tooLong)
	}
	// A templated alarm webhook: the template's textarea shows for
	// TEMPLATE only; one that names no field of an alarm is refused on it.
	b.run(t, "a templated alarm webhook",
		setValue(`input[name=alarm_webhook_url]`, "https://hooks.example.com/carillon"),
		setValue(`select[name=alarm_webhook_format]`, fmt.Sprint(int32(carillonv1.AlarmWebhookFormat_ALARM_WEBHOOK_FORMAT_TEMPLATE))),
		chromedp.WaitVisible(`textarea[name=alarm_webhook_template]`),
		setValue(`textarea[name=alarm_webhook_template]`, `{"text": {{.Nope}}}`),
		setValue(`input[name=alarm_webhook_secret]`, "s3cret"),
		chromedp.Click(`//button[text()="Create"]`, chromedp.BySearch),
		chromedp.WaitVisible(`[data-field-error=alarm_webhook_template]`),
		setValue(`textarea[name=alarm_webhook_template]`, `{"text": {{json .Message}}}`),
	)
	b.run(t, "create the job",
		setValue(`select[name=calendar_ids]`, "1"), // the holidays calendar
		setValue(`input[name=name]`, "made.in-browser"),
		chromedp.Click(`//button[text()="Create"]`, chromedp.BySearch),
		chromedp.WaitVisible(`//td[text()="made in the browser"]`, chromedp.BySearch),
	)
	made, err := c.job.ListJobs(ctx, &carillonv1.ListJobsRequest{Text: "made in the browser"})
	if err != nil || len(made.Jobs) != 1 || made.Jobs[0].Script.GetSource() != "echo made in the browser" ||
		made.Jobs[0].Schedule.GetCron() != "*/10 * * * * ?" || made.Jobs[0].Schedule.GetTimeZone() != "Europe/Berlin" ||
		len(made.Jobs[0].CalendarIds) != 1 || made.Jobs[0].CalendarIds[0] != 1 ||
		made.Jobs[0].AlarmWebhookFormat != carillonv1.AlarmWebhookFormat_ALARM_WEBHOOK_FORMAT_TEMPLATE ||
		made.Jobs[0].AlarmWebhookTemplate != `{"text": {{json .Message}}}` || !made.Jobs[0].HasAlarmWebhookSecret ||
		made.Jobs[0].Name != "made.in-browser" {
		t.Fatalf("the job made in the console: %v, %v; script %q", made, err, made.GetJobs()[0].GetScript().GetSource())
	}

	// Run "say hello" once from its row; its run succeeds and its log reads.
	b.run(t, "run a job once",
		chromedp.Navigate(a.URL+"/#/jobs"),
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
		chromedp.Navigate(fmt.Sprintf("%s/#/runs?job=%d&run=%d", a.URL, job.Id, runs[0].Id)),
		chromedp.Poll(fmt.Sprintf(`document.querySelector('[data-testid="status-%d"]')?.textContent === "SUCCEEDED"`, runs[0].Id), nil,
			chromedp.WithPollingTimeout(20*time.Second)),
		chromedp.Poll(`document.querySelector('[data-testid="run-log"]')?.textContent.includes("ok run")`, nil,
			chromedp.WithPollingTimeout(20*time.Second)),
		chromedp.Text(`[data-testid="run-log"]`, &log),
	)
	b.screenshot(t, "run-log")

	// Run it once more, two hours from now, from "Run with…": the run waits
	// PENDING, scheduled for that minute (the browser's zone is the test's).
	at := time.Now().Add(2 * time.Hour).Truncate(time.Minute)
	b.run(t, "run once at a later time",
		chromedp.Navigate(a.URL+"/#/jobs"),
		chromedp.Click(fmt.Sprintf(`//tr[td[1][text()="%d"]]//button[text()="Run with…"]`, job.Id), chromedp.BySearch),
		setValue(`input[name=run_at]`, at.Format("2006-01-02T15:04")),
		chromedp.Click(`//form[@aria-label="run with"]//button[text()="Run once"]`, chromedp.BySearch),
		chromedp.WaitNotPresent(`form[aria-label="run with"]`),
	)
	var later []*carillonv1.Run
	for _, r := range listRuns(t, c, job.Id) {
		if r.Status == carillonv1.RunStatus_RUN_STATUS_PENDING {
			later = append(later, r)
		}
	}
	if len(later) != 1 || !later[0].ScheduledAt.AsTime().Equal(at) {
		t.Errorf("pending runs after Run with… at %v: %v", at, later)
	}

	// Kill a long run from the runs page.
	trig, err := c.job.TriggerJob(ctx, &carillonv1.TriggerJobRequest{JobId: long.Id})
	if err != nil {
		t.Fatal(err)
	}
	killSel := fmt.Sprintf(`//tr[td[1]/a[text()="%d"]]//button[text()="Kill"]`, trig.RunIds[0])
	b.run(t, "kill a long run",
		chromedp.Navigate(fmt.Sprintf("%s/#/runs?job=%d", a.URL, long.Id)),
		chromedp.WaitVisible(killSel, chromedp.BySearch),
		chromedp.Click(killSel, chromedp.BySearch),
		chromedp.Poll(fmt.Sprintf(`document.querySelector('[data-testid="status-%d"]')?.textContent === "KILLED"`, trig.RunIds[0]), nil,
			chromedp.WithPollingTimeout(20*time.Second)),
	)
	b.screenshot(t, "runs")

	b.run(t, "users page", chromedp.Navigate(a.URL+"/#/users"), chromedp.WaitVisible(`//td[text()="admin"]`, chromedp.BySearch))
	b.screenshot(t, "users")

	// A phone: the page does not overflow sideways (wide tables scroll in
	// their own box).
	b.run(t, "phone width",
		chromedp.EmulateViewport(390, 844, chromedp.EmulateMobile),
		chromedp.Navigate(a.URL+"/#/jobs"),
		chromedp.WaitVisible(`main tbody tr`),
	)
	fits := b.fitsWidth(t, "jobs-phone", "")
	b.screenshot(t, "jobs-phone")
	if !fits {
		t.Error("the jobs page is wider than a phone's screen")
	}
	b.run(t, "back to a laptop", chromedp.EmulateViewport(1280, 900))

	// Chinese.
	var nav string
	b.run(t, "switch to Chinese",
		chromedp.Navigate(a.URL+"/#/jobs"),
		chromedp.WaitVisible(`//button[text()="中文 / ZH"]`, chromedp.BySearch),
		chromedp.Click(`//button[text()="中文 / ZH"]`, chromedp.BySearch),
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
		chromedp.Navigate(a.URL+"/#/groups"),
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

}

// TestConsoleRoles signs in as a VIEWER, who sees no write controls, and
// as a MEMBER of one group, who sees only that group's jobs.
func TestConsoleRoles(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	a := startAdmin(t)
	c := newClients(a.URL, http.DefaultClient)
	none := &carillonv1.Schedule{Type: carillonv1.ScheduleType_SCHEDULE_TYPE_NONE}
	var groups []*carillonv1.Group
	for _, app := range []string{"web", "other"} {
		g, err := c.group.CreateGroup(ctx, &carillonv1.CreateGroupRequest{Group: &carillonv1.Group{AppName: app}})
		if err != nil {
			t.Fatal(err)
		}
		groups = append(groups, g.Group)
	}
	job := createJob(t, c, &carillonv1.Job{GroupId: groups[0].Id, Description: "say hello", Handler: "ok", Schedule: none})
	createJob(t, c, &carillonv1.Job{GroupId: groups[1].Id, Description: "other team's job", Handler: "ok", Schedule: none})
	g := &carillonv1.GetGroupResponse{Group: groups[0]}

	// A VIEWER sees no write controls.
	newUser(t, a.URL, &carillonv1.User{Username: "vera", Role: carillonv1.Role_ROLE_VIEWER})
	v := newBrowser(t, a.URL)
	v.signIn(t, "vera", "a member's password")
	var buttons []*cdp.Node
	v.run(t, "viewer's jobs page",
		chromedp.Navigate(a.URL+"/#/jobs"),
		chromedp.WaitVisible(fmt.Sprintf(`//td[text()="%d"]`, job.Id), chromedp.BySearch),
		chromedp.Nodes(`//button[text()="Run once" or text()="Start" or text()="Stop"]`, &buttons, chromedp.BySearch, chromedp.AtLeast(0)),
	)
	if len(buttons) != 0 {
		t.Errorf("a VIEWER sees %d write buttons on the jobs page", len(buttons))
	}
	v.screenshot(t, "jobs-viewer")

	// A MEMBER of "web" sees only its jobs.
	newUser(t, a.URL, &carillonv1.User{Username: "mia", Role: carillonv1.Role_ROLE_MEMBER, GroupIds: []int64{g.Group.Id}})
	m := newBrowser(t, a.URL)
	m.signIn(t, "mia", "a member's password")
	var table string
	m.run(t, "member's jobs page",
		chromedp.Navigate(a.URL+"/#/jobs"),
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

// inViewport is a JavaScript expression: whether the element of selector
// sel is laid out wholly within the window's width.
func inViewport(sel string) string {
	return fmt.Sprintf(`(() => { const r = document.querySelector(%q)?.getBoundingClientRect();
		return !!r && r.width > 0 && r.left >= 0 && r.right <= window.innerWidth; })()`, sel)
}

// TestConsoleNewcomer drives what tripped newcomers up in the console
// (issue 32): deleting old runs asks first with the count; the jobs
// table's group, last-run and script handler cells, Run once linking to
// its run, whose detail opens above the list; a log that cannot be read
// says so once; long unbroken names wrap, and at 390 px a row's actions
// are in a menu within the screen; Chinese covers enum values and shows
// no UNSPECIFIED; the dashboard's empty lists and retries say so.
func TestConsoleNewcomer(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	a := startAdmin(t)
	c := newClients(a.URL, http.DefaultClient)
	long := strings.Repeat("averylongunbrokenname", 8)
	g, err := c.group.CreateGroup(ctx, &carillonv1.CreateGroupRequest{Group: &carillonv1.Group{AppName: "web", Title: "Web " + long}})
	if err != nil {
		t.Fatal(err)
	}
	nobody, err := c.group.CreateGroup(ctx, &carillonv1.CreateGroupRequest{Group: &carillonv1.Group{AppName: "nobody"}})
	if err != nil {
		t.Fatal(err)
	}
	startExecutor(t, a.URL, "web")
	none := &carillonv1.Schedule{Type: carillonv1.ScheduleType_SCHEDULE_TYPE_NONE}
	hello := createJob(t, c, &carillonv1.Job{GroupId: g.Group.Id, Description: long, Handler: "ok", Schedule: none})
	script := createJob(t, c, &carillonv1.Job{GroupId: g.Group.Id, Description: "a script", Schedule: none,
		Script: &carillonv1.Script{Type: carillonv1.ScriptType_SCRIPT_TYPE_SHELL, Source: "echo hi"}})
	retried := createJob(t, c, &carillonv1.Job{GroupId: g.Group.Id, Description: "fails twice", Handler: "fail", Param: "fail",
		Schedule: none, RetryCount: 1, RetryDelaySeconds: 1})
	orphan := createJob(t, c, &carillonv1.Job{GroupId: nobody.Group.Id, Description: "no executor", Handler: "ok", Schedule: none})

	b := newBrowser(t, a.URL)
	b.signIn(t, "admin", adminPassword)
	var running, failures string
	b.run(t, "an empty dashboard",
		chromedp.Navigate(a.URL+"/#/"),
		loadedList(`[data-testid=running-now]`), textOf(`[data-testid=running-now]`, &running),
		loadedList(`[data-testid=recent-failures]`), textOf(`[data-testid=recent-failures]`, &failures),
	)
	if !strings.Contains(running, "No run is running now.") || !strings.Contains(failures, "No failed run.") {
		t.Errorf("empty dashboard lists: %q, %q", running, failures)
	}

	// Run once from the row: the message links to the run, whose detail
	// opens above the runs list.
	runOnce := fmt.Sprintf(`//tr[td[1][text()="%d"]]//button[text()="Run once"]`, hello.Id)
	var href string
	var ok bool
	b.run(t, "run once links to the run",
		chromedp.Navigate(a.URL+"/#/jobs"),
		chromedp.WaitVisible(runOnce, chromedp.BySearch),
		chromedp.Click(runOnce, chromedp.BySearch),
		chromedp.WaitVisible(`[role=status] a`),
		chromedp.AttributeValue(`[role=status] a`, "href", &href, &ok),
		chromedp.Click(`[role=status] a`),
		chromedp.WaitVisible(`[data-testid=run-detail]`),
		chromedp.Poll(`document.querySelector('[data-testid="run-log"]')?.textContent.includes("ok run")`, nil, chromedp.WithPollingTimeout(20*time.Second)),
		chromedp.Evaluate(`document.querySelector('[data-testid=run-detail]').getBoundingClientRect().top < document.querySelector('main table').getBoundingClientRect().top`, &ok),
	)
	runs := listRuns(t, c, hello.Id)
	if len(runs) != 1 || !strings.HasSuffix(href, fmt.Sprintf("run=%d", runs[0].Id)) || !ok {
		t.Errorf("Run once's link %q (runs %v); detail above the list: %v", href, runs, ok)
	}
	var detail string
	b.run(t, "a run without an alarm", textOf(`[data-testid=run-detail]`, &detail))
	if !strings.Contains(detail, "Alarm\nnone") || strings.Contains(detail, "UNSPECIFIED") {
		t.Errorf("the detail of a run without an alarm: %q", detail)
	}

	// The jobs table: group, last run, script handler.
	if _, err := c.job.TriggerJob(ctx, &carillonv1.TriggerJobRequest{JobId: retried.Id}); err != nil {
		t.Fatal(err)
	}
	var group, last, handler string
	b.run(t, "jobs table cells",
		chromedp.Navigate(a.URL+"/#/jobs"),
		chromedp.Poll(fmt.Sprintf(`document.querySelector('[data-testid="last-run-of-%d"]')?.textContent === "SUCCEEDED"`, hello.Id), nil,
			chromedp.WithPollingTimeout(20*time.Second)),
		textOf(fmt.Sprintf(`[data-testid="group-of-%d"]`, hello.Id), &group),
		textOf(fmt.Sprintf(`[data-testid="last-run-of-%d"]`, script.Id), &last),
		textOf(fmt.Sprintf(`[data-testid="handler-of-%d"]`, script.Id), &handler),
	)
	if group != "Web "+long+" (web)" || last != "never run" || handler != "script:shell" {
		t.Errorf("jobs table: group %q, last run of a job never run %q, script handler %q", group, last, handler)
	}
	if !b.fitsWidth(t, "newcomer-wide", "[data-testid=jobs-table]") {
		t.Error("a long unbroken name widens the jobs table at 1280 px")
	}

	// A retry is told from its first attempt.
	eventually(t, a.URL, 30*time.Second, func() error {
		if runs := failedRuns(t, c, retried.Id); len(runs) < 2 {
			return fmt.Errorf("the failing job's two attempts: %v", listRuns(t, c, retried.Id))
		}
		return nil
	})
	failed := failedRuns(t, c, retried.Id)
	b.run(t, "recent failures say the attempt",
		chromedp.Navigate(a.URL+"/#/"),
		chromedp.Poll(fmt.Sprintf(`document.querySelector('[data-testid="attempt-%d"]')?.textContent === "retry 1" &&
			document.querySelector('[data-testid="attempt-%d"]')?.textContent === "first attempt"`, failed[0].Id, failed[1].Id), nil,
			chromedp.WithPollingTimeout(20*time.Second)),
	)

	// A run whose log cannot be read (it was never sent): the error once,
	// no "Loading…" forever.
	trig, err := c.job.TriggerJob(ctx, &carillonv1.TriggerJobRequest{JobId: orphan.Id})
	if err != nil {
		t.Fatal(err)
	}
	b.run(t, "a log that cannot be read",
		chromedp.Navigate(fmt.Sprintf("%s/#/runs?job=%d&run=%d", a.URL, orphan.Id, trig.RunIds[0])),
		chromedp.Poll(`document.querySelectorAll('[data-testid=run-detail] [role=alert]').length === 1`, nil, chromedp.WithPollingTimeout(20*time.Second)),
		textOf(`[data-testid=run-detail]`, &detail),
	)
	if strings.Contains(detail, "Loading") || strings.Contains(detail, "UNSPECIFIED") || !strings.Contains(detail, "never dispatched") {
		t.Errorf("the detail of a run without a log: %q", detail)
	}

	// Deleting old runs asks first, with the count; cancelling deletes nothing.
	before := len(listRuns(t, c, hello.Id))
	var ask string
	b.run(t, "delete old runs asks first",
		chromedp.Navigate(fmt.Sprintf("%s/#/runs?job=%d", a.URL, hello.Id)),
		setValue(`input[name=days]`, "0"),
		chromedp.Click(`//form[@aria-label="delete old runs"]//button[text()="Delete"]`, chromedp.BySearch),
		textOf(`[data-testid=delete-count]`, &ask),
	)
	if ask != "Delete 1 settled runs older than 0 days? This cannot be undone." || len(listRuns(t, c, hello.Id)) != before {
		t.Errorf("the confirmation says %q; %d runs left of %d", ask, len(listRuns(t, c, hello.Id)), before)
	}
	b.run(t, "cancel, then confirm",
		chromedp.Click(`//div[@role="alertdialog"]//button[text()="Cancel"]`, chromedp.BySearch),
		chromedp.WaitNotPresent(`[role=alertdialog]`),
		setValue(`input[name=days]`, "-1"),
		chromedp.Click(`//form[@aria-label="delete old runs"]//button[text()="Delete"]`, chromedp.BySearch),
		chromedp.WaitVisible(`//p[@role="alert"][contains(., "a whole number")]`, chromedp.BySearch),
	)
	if n := len(listRuns(t, c, hello.Id)); n != before {
		t.Errorf("cancelled and refused deletes left %d runs of %d", n, before)
	}
	b.run(t, "confirm",
		setValue(`input[name=days]`, "0"),
		chromedp.Click(`//form[@aria-label="delete old runs"]//button[text()="Delete"]`, chromedp.BySearch),
		chromedp.Click(`//div[@role="alertdialog"]//button[text()="Delete 1 runs"]`, chromedp.BySearch),
		chromedp.WaitVisible(`//p[@role="status"][contains(., "1")]`, chromedp.BySearch),
	)
	if n := len(listRuns(t, c, hello.Id)); n != 0 {
		t.Errorf("%d runs after the confirmed delete", n)
	}

	// A phone: no sideways scroll, a row's actions in a menu on screen.
	menu := fmt.Sprintf(`[data-testid="menu-%d"]`, hello.Id)
	var menuOnScreen, runOnceOnScreen, fitsOpen bool
	b.run(t, "phone: the row menu",
		chromedp.EmulateViewport(390, 844, chromedp.EmulateMobile),
		chromedp.Navigate(a.URL+"/#/jobs"),
		chromedp.WaitVisible(menu),
	)
	fits := b.fitsWidth(t, "jobs-phone-table", "[data-testid=jobs-table]")
	b.run(t, "phone: open the row menu",
		chromedp.Evaluate(inViewport(menu), &menuOnScreen),
		chromedp.Click(menu),
		chromedp.WaitVisible(fmt.Sprintf(`//*[@data-testid="row-menu-%d"]//button[text()="Run once"]`, hello.Id), chromedp.BySearch),
		chromedp.Evaluate(fmt.Sprintf(`(() => { const r = document.evaluate('//*[@data-testid="row-menu-%d"]//button[text()="Run once"]', document, null,
			XPathResult.FIRST_ORDERED_NODE_TYPE, null).singleNodeValue.getBoundingClientRect(); return r.left >= 0 && r.right <= window.innerWidth; })()`, hello.Id),
			&runOnceOnScreen),
		chromedp.Evaluate(`document.documentElement.scrollWidth <= window.innerWidth`, &fitsOpen),
	)
	b.screenshot(t, "jobs-phone-menu")
	if !fits || !menuOnScreen || !runOnceOnScreen || !fitsOpen {
		t.Errorf("at 390 px: page and table fit %v, row menu on screen %v, its Run once on screen %v, the page fits with the menu open %v",
			fits, menuOnScreen, runOnceOnScreen, fitsOpen)
	}
	b.run(t, "back to a laptop", chromedp.EmulateViewport(1280, 900))

	// Chinese: enum values too, and a Latin fallback on the switch.
	var lang, route, status, body string
	b.run(t, "Chinese enum values",
		chromedp.Navigate(a.URL+"/#/jobs"),
		textOf(`[data-testid=lang]`, &lang),
		chromedp.Click(`[data-testid=lang]`),
		chromedp.WaitVisible(`//button[text()="新增任务"]`, chromedp.BySearch),
		chromedp.Click(`//button[text()="新增任务"]`, chromedp.BySearch),
		chromedp.WaitVisible(`select[name=route_strategy]`),
		chromedp.Evaluate(`document.querySelector('select[name=route_strategy]').selectedOptions[0].textContent`, &route),
		chromedp.Navigate(fmt.Sprintf("%s/#/runs?job=%d&run=%d", a.URL, retried.Id, failed[0].Id)),
		textOf(fmt.Sprintf(`[data-testid="status-%d"]`, failed[0].Id), &status),
		chromedp.Text(`body`, &body),
	)
	if lang != "中文 / ZH" || route != "第一个" || status != "失败" || strings.Contains(body, "UNSPECIFIED") || !strings.Contains(body, "失败重试") {
		t.Errorf("Chinese: switch %q, route FIRST %q, status FAILED %q; the page:\n%s", lang, route, status, body)
	}
	b.run(t, "back to English", chromedp.Click(`[data-testid=lang]`), chromedp.WaitVisible(`//button[text()="中文 / ZH"]`, chromedp.BySearch))
	b.noErrors(t)
}

// failedRuns returns the failed runs of a job, newest first.
func failedRuns(t *testing.T, c clients, jobID int64) []*carillonv1.Run {
	t.Helper()
	var out []*carillonv1.Run
	for _, r := range listRuns(t, c, jobID) {
		if r.Status == carillonv1.RunStatus_RUN_STATUS_FAILED {
			out = append(out, r)
		}
	}
	return out
}
