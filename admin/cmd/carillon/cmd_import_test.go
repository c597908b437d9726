package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// TestImportXXLJob imports xxl-job dumps through the CLI into a real
// admin: a dry run creates nothing, a bad row (found by the CLI or by the
// admin) is named by its table and id and nothing is imported, a good dump
// creates its groups and jobs with child ids remapped, and importing it
// again is refused whole.
func TestImportXXLJob(t *testing.T) {
	t.Parallel()
	url := serveAdmin(t, nil)
	b := newCLI(t)
	cli := func(_ *testing.T, stdin string, args ...string) (int, string, string) { return b.run(stdin, args...) }
	cfg := filepath.Join(b.home, "config.json")
	admin := []string{"--config", cfg}
	if code, _, errOut := cli(t, testPassword+"\n", append([]string{"login", "--server", url, "--user", "admin", "--password-stdin"}, admin...)...); code != 0 {
		t.Fatalf("login: exit %d: %s", code, errOut)
	}
	fixture := func(name string) string {
		p, err := filepath.Abs(filepath.Join("..", "..", "internal", "xxljob", "testdata", "import", name))
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	groupCount := func() int {
		t.Helper()
		code, out, errOut := cli(t, "", append([]string{"group", "list"}, admin...)...)
		if code != 0 {
			t.Fatalf("group list: exit %d: %s", code, errOut)
		}
		return strings.Count(out, "\n") - 1
	}

	code, out, errOut := cli(t, "", append([]string{"import", "xxl-job", "--dry-run", fixture("xxl-job-2.4.sql")}, admin...)...)
	if code != 0 || !strings.Contains(out, "would create 2 groups and 13 jobs") {
		t.Fatalf("dry run: exit %d\n%s%s", code, out, errOut)
	}
	if n := groupCount(); n != 0 {
		t.Fatalf("a dry run created %d groups", n)
	}

	// A bad row the admin finds (Carillon's cron has no 30th of February),
	// the last of the dump: nothing of the rows before it is imported.
	src, err := os.ReadFile(fixture("xxl-job-2.4.sql"))
	if err != nil {
		t.Fatal(err)
	}
	bad := filepath.Join(t.TempDir(), "bad.sql")
	badSrc := string(src) + "INSERT INTO `xxl_job_info` VALUES (30,1,'bad cron','2024-01-01 10:00:00','2024-01-01 10:00:00','XXL','','CRON'," +
		"'0 0 0 30 2 ?','DO_NOTHING','FIRST','h','','SERIAL_EXECUTION',0,0,'BEAN','',NULL,NULL,'',1,0,0);\n"
	if err := os.WriteFile(bad, []byte(badSrc), 0o600); err != nil {
		t.Fatal(err)
	}
	code, _, errOut = cli(t, "", append([]string{"import", "xxl-job", bad}, admin...)...)
	if code != exitRefused || !regexp.MustCompile(`^carillon: invalid_argument: xxl_job_info id 30: schedule\.cron: .*; nothing imported\n$`).MatchString(errOut) {
		t.Errorf("bad cron: exit %d %q, want exit %d naming xxl_job_info id 30", code, errOut, exitRefused)
	}
	// A bad row the CLI finds.
	if err := os.WriteFile(bad, []byte(strings.Replace(string(src), "'FIX_RATE','60'", "'FIX_DELAY','60'", 1)), 0o600); err != nil {
		t.Fatal(err)
	}
	code, _, errOut = cli(t, "", append([]string{"import", "xxl-job", bad}, admin...)...)
	if code != exitRefused || !strings.Contains(errOut, "xxl_job_info id 11: schedule_type") || !strings.Contains(errOut, "nothing imported") {
		t.Errorf("FIX_DELAY: exit %d %q, want exit %d naming xxl_job_info id 11", code, errOut, exitRefused)
	}
	if n := groupCount(); n != 0 {
		t.Fatalf("a refused import created %d groups", n)
	}

	code, out, errOut = cli(t, "", append([]string{"import", "xxl-job", "--time-zone", "Asia/Shanghai", fixture("xxl-job-2.4.sql")}, admin...)...)
	if code != 0 || !strings.Contains(out, "created 2 groups and 13 jobs") {
		t.Fatalf("import: exit %d\n%s%s", code, out, errOut)
	}
	// Job 10 of the dump (the first created, id 1) has children 11 and 12
	// (ids 2 and 3); its group is XXL_JOB.
	code, out, errOut = cli(t, "", append([]string{"job", "get", "1", "--json"}, admin...)...)
	if code != 0 || !regexp.MustCompile(`"childJobIds":\s*\[\s*"2",\s*"3"\s*\]`).MatchString(out) || !regexp.MustCompile(`"timeZone":\s*"Asia/Shanghai"`).MatchString(out) {
		t.Errorf("job get 1: exit %d\n%s%s", code, out, errOut)
	}
	code, out, _ = cli(t, "", append([]string{"group", "get", "1", "--json"}, admin...)...)
	if code != 0 || !regexp.MustCompile(`"executorProtocol":\s*"EXECUTOR_PROTOCOL_XXL_JOB"`).MatchString(out) {
		t.Errorf("group get 1: exit %d\n%s", code, out)
	}
	code, _, errOut = cli(t, "", append([]string{"import", "xxl-job", fixture("xxl-job-2.4.sql")}, admin...)...)
	if code != exitRefused || !strings.Contains(errOut, "already_exists") || !strings.Contains(errOut, "nothing imported") {
		t.Errorf("import again: exit %d %q, want already_exists, nothing imported", code, errOut)
	}
	if n := groupCount(); n != 2 {
		t.Errorf("%d groups after the refused second import, want 2", n)
	}
	// A group of xxl-job executors, with scripts, by hand.
	code, out, errOut = cli(t, "", append([]string{"group", "create", "legacy", "--protocol", "xxl-job", "--allow-scripts"}, admin...)...)
	if code != 0 || !regexp.MustCompile(`PROTOCOL[\s\S]*legacy\s+legacy\s+AUTO\s+xxl-job\+scripts`).MatchString(out) {
		t.Errorf("group create --protocol xxl-job --allow-scripts: exit %d\n%s%s", code, out, errOut)
	}
	code, out, errOut = cli(t, "", append([]string{"group", "update", "3", "--allow-scripts=false"}, admin...)...)
	if code != 0 || !regexp.MustCompile(`legacy\s+legacy\s+AUTO\s+xxl-job\s`).MatchString(out) {
		t.Errorf("group update --allow-scripts=false: exit %d\n%s%s", code, out, errOut)
	}
	code, out, errOut = cli(t, "", append([]string{"group", "update", "3", "--protocol", "carillon"}, admin...)...)
	if code != 0 || !regexp.MustCompile(`legacy\s+legacy\s+AUTO\s+carillon\s`).MatchString(out) {
		t.Errorf("group update --protocol carillon: exit %d\n%s%s", code, out, errOut)
	}
	if code, _, errOut = cli(t, "", append([]string{"group", "create", "other", "--protocol", "soap"}, admin...)...); code != exitUsage {
		t.Errorf("--protocol soap: exit %d %q, want %d", code, errOut, exitUsage)
	}
	// The other schemas import too.
	for _, f := range []string{"xxl-job-2.2.sql", "xxl-job-3.5.sql"} {
		code, out, errOut = cli(t, "", append([]string{"import", "xxl-job", "--dry-run", fixture(f)}, admin...)...)
		if code != 0 || !strings.Contains(out, "would create") {
			t.Errorf("%s dry run: exit %d\n%s%s", f, code, out, errOut)
		}
	}
}

// TestImportXXLJobCutOver: an import creates every job stopped, those
// running in xxl-job too (its admin still fires them until the cut-over),
// and prints the carillon job start line for after it, which starts them;
// the dry run says so and warns about what will not work yet; --start
// starts them at once.
func TestImportXXLJobCutOver(t *testing.T) {
	t.Parallel()
	b, as := loggedIn(t)
	src, err := os.ReadFile(filepath.Join("..", "..", "internal", "xxljob", "testdata", "import", "xxl-job-2.4.sql"))
	if err != nil {
		t.Fatal(err)
	}
	// Group 1 MANUAL, with the address it has.
	manual := strings.Replace(string(src), "0,'http://10.0.0.9:9999/'", "1,'http://10.0.0.9:9999/'", 1)
	// Job 17 with an alarm e-mail.
	manual = strings.Replace(manual, "'py','','NONE'", "'py','ops@example.com','NONE'", 1)
	if strings.Count(manual, "1,'http://10.0.0.9:9999/'")+strings.Count(manual, "ops@example.com") != 2 {
		t.Fatal("the fixture's group 1 or job 17 changed: fix the test")
	}
	dump := filepath.Join(t.TempDir(), "dump.sql")
	if err := os.WriteFile(dump, []byte(manual), 0o600); err != nil {
		t.Fatal(err)
	}

	code, out, errOut := b.run("", as("import", "xxl-job", "--dry-run", dump)...)
	if code != 0 {
		t.Fatalf("dry run: exit %d: %s", code, errOut)
	}
	m := regexp.MustCompile(`\n(\d+) jobs run in xxl-job \(xxl-job ids ([\d ]+)\): they would be created stopped`).FindStringSubmatch(out)
	if m == nil {
		t.Errorf("the dry run does not say which jobs run in xxl-job:\n%s", out)
	}
	for _, want := range []string{
		`warning: the GLUE script jobs [\d, ]+ \(xxl-job ids\) are in groups that do not allow scripts`,
		`warning: the jobs [\d, ]+ \(xxl-job ids\) have alarm e-mails: the admin sends them only when it runs with --smtp-addr`,
		`warning: the MANUAL group xxl-job-executor-sample \(xxl-job id 1\) calls the executors http://10\.0\.0\.9:9999`,
	} {
		if !regexp.MustCompile(want).MatchString(errOut) {
			t.Errorf("the dry run warns no %s:\n%s", want, errOut)
		}
	}

	out = b.must("", as("import", "xxl-job", dump)...)
	m = regexp.MustCompile(`\n(\d+) jobs that run in xxl-job were created stopped(?s:.*)\n    carillon job start ([\d ]+)\n`).FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("the import prints no carillon job start line:\n%s", out)
	}
	if started := b.must("", as("job", "list", "--started")...); strings.Count(started, "\n") != 1 {
		t.Errorf("the import started jobs:\n%s", started)
	}
	ids := strings.Fields(m[2])
	if n, _ := strconv.Atoi(m[1]); n == 0 || n != len(ids) {
		t.Fatalf("%s jobs, ids %q", m[1], ids)
	}
	b.must("", as(append([]string{"job", "start"}, ids...)...)...)
	if started := b.must("", as("job", "list", "--started")...); strings.Count(started, "\n") != 1+len(ids) {
		t.Errorf("after carillon job start %v:\n%s", ids, started)
	}

	// --start: the jobs that ran in xxl-job start at once.
	b2, as2 := loggedIn(t)
	out = b2.must("", as2("import", "xxl-job", "--start", dump)...)
	if !strings.Contains(out, "were started (--start)") {
		t.Errorf("import --start:\n%s", out)
	}
	if started := b2.must("", as2("job", "list", "--started")...); strings.Count(started, "\n") != 1+len(ids) {
		t.Errorf("after import --start:\n%s", started)
	}
}
