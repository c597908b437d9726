package sdk_test

import (
	"os"
	"os/exec"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"connectrpc.com/connect"
	"google.golang.org/protobuf/types/known/timestamppb"

	carillonv1 "github.com/carillonhq/carillon/proto/carillon/v1"
	"github.com/carillonhq/carillon/proto/carillon/v1/carillonv1connect"
	"github.com/carillonhq/carillon/sdk"
	"github.com/carillonhq/carillon/sdk/sdktest"
)

func TestScript(t *testing.T) {
	t.Parallel()

	type testBundle struct {
		admin *sdktest.Admin
		ex    *sdktest.Executor
	}
	setup := func(t *testing.T, enabled bool) *testBundle {
		t.Helper()
		admin := sdktest.NewAdmin(t, "tok")
		ex := sdktest.Start(t, sdk.Config{AdminURLs: []string{admin.URL}, AccessToken: "tok", ScriptsEnabled: enabled}, nil)
		return &testBundle{admin: admin, ex: ex}
	}
	runScript := func(t *testing.T, b *testBundle, runID int64, typ carillonv1.ScriptType, source, param string, timeout int32) {
		t.Helper()
		_, err := b.ex.Client.Run(t.Context(), &carillonv1.RunRequest{
			RunId: runID, JobId: runID, Param: param, ShardIndex: 1, ShardTotal: 3, TimeoutSeconds: timeout,
			Script: &carillonv1.Script{Type: typ, Source: source},
		})
		if err != nil {
			t.Fatalf("Run(script): %v", err)
		}
	}
	need := func(t *testing.T, commands ...string) {
		t.Helper()
		for _, c := range commands {
			if _, err := exec.LookPath(c); err == nil {
				return
			}
		}
		t.Skipf("no %s on this machine", strings.Join(commands, " or "))
	}

	for _, test := range []struct {
		name     string
		typ      carillonv1.ScriptType
		commands []string
		source   string
	}{
		{"Shell", carillonv1.ScriptType_SCRIPT_TYPE_SHELL, []string{"bash", "sh"},
			"echo \"args: $1|$2|$3 run $CARILLON_RUN_ID\"\necho 'to stderr' >&2\n"},
		{"Python", carillonv1.ScriptType_SCRIPT_TYPE_PYTHON, []string{"python3", "python"},
			"import sys, os\nprint('args: ' + '|'.join(sys.argv[1:]) + ' run ' + os.environ['CARILLON_RUN_ID'])\nprint('to stderr', file=sys.stderr)\n"},
		{"NodeJS", carillonv1.ScriptType_SCRIPT_TYPE_NODEJS, []string{"node", "nodejs"},
			"console.log('args: ' + process.argv.slice(2).join('|') + ' run ' + process.env.CARILLON_RUN_ID)\nconsole.error('to stderr')\n"},
		{"PHP", carillonv1.ScriptType_SCRIPT_TYPE_PHP, []string{"php"},
			"<?php\necho 'args: ' . implode('|', array_slice($argv, 1)) . ' run ' . getenv('CARILLON_RUN_ID') . \"\\n\";\nfwrite(STDERR, \"to stderr\\n\");\n"},
		{"PowerShell", carillonv1.ScriptType_SCRIPT_TYPE_POWERSHELL, []string{"pwsh", "powershell"},
			"Write-Output (\"args: \" + ($args -join '|') + \" run \" + $env:CARILLON_RUN_ID)\n[Console]::Error.WriteLine('to stderr')\n"},
	} {
		t.Run(test.name+"Runs", func(t *testing.T) {
			t.Parallel()
			need(t, test.commands...)
			b := setup(t, true)
			runScript(t, b, 41, test.typ, test.source, "a b", 0)
			if res := b.admin.Result(t, 41); res.GetStatus() != carillonv1.RunStatus_RUN_STATUS_SUCCEEDED {
				t.Errorf("result %v %q, want SUCCEEDED", res.GetStatus(), res.GetMessage())
			}
			log := readWholeLog(t, b.ex.Client, 41)
			for _, want := range []string{"args: a b|1|3 run 41\n", "to stderr\n"} {
				if !strings.Contains(log, want) {
					t.Errorf("log lacks %q:\n%s", want, log)
				}
			}
		})
	}

	// The run's logical time and attempt, in the script's environment.
	t.Run("Environment", func(t *testing.T) {
		t.Parallel()
		need(t, "bash", "sh")
		b := setup(t, true)
		at := time.Date(2026, 12, 24, 18, 0, 0, 0, time.FixedZone("CET", 3600))
		_, err := b.ex.Client.Run(t.Context(), &carillonv1.RunRequest{
			RunId: 7, JobId: 3, Param: "p", ShardIndex: 1, ShardTotal: 2, Attempt: 2, ScheduledAt: timestamppb.New(at),
			Script: &carillonv1.Script{Type: carillonv1.ScriptType_SCRIPT_TYPE_SHELL,
				Source: "echo \"env: $CARILLON_SCHEDULED_AT $CARILLON_RUN_ID $CARILLON_JOB_ID $CARILLON_ATTEMPT $CARILLON_SHARD_INDEX/$CARILLON_SHARD_TOTAL $CARILLON_PARAM\"\n"},
		})
		if err != nil {
			t.Fatal(err)
		}
		if res := b.admin.Result(t, 7); res.GetStatus() != carillonv1.RunStatus_RUN_STATUS_SUCCEEDED {
			t.Fatalf("result %v %q, want SUCCEEDED", res.GetStatus(), res.GetMessage())
		}
		if log, want := readWholeLog(t, b.ex.Client, 7), "env: 2026-12-24T17:00:00Z 7 3 2 1/2 p\n"; !strings.Contains(log, want) {
			t.Errorf("log lacks %q:\n%s", want, log)
		}
	})

	t.Run("ExitCodeFails", func(t *testing.T) {
		t.Parallel()
		need(t, "bash", "sh")
		b := setup(t, true)
		runScript(t, b, 1, carillonv1.ScriptType_SCRIPT_TYPE_SHELL, "echo bye\nexit 3\n", "", 0)
		res := b.admin.Result(t, 1)
		if res.GetStatus() != carillonv1.RunStatus_RUN_STATUS_FAILED || res.GetMessage() != "script exited with status 3" {
			t.Errorf("result %v %q, want FAILED with the exit status", res.GetStatus(), res.GetMessage())
		}
	})

	t.Run("DisabledFails", func(t *testing.T) {
		t.Parallel()
		b := setup(t, false)
		runScript(t, b, 1, carillonv1.ScriptType_SCRIPT_TYPE_SHELL, "touch /tmp/should-not-exist\n", "", 0)
		res := b.admin.Result(t, 1)
		if res.GetStatus() != carillonv1.RunStatus_RUN_STATUS_FAILED || !strings.Contains(res.GetMessage(), sdk.ErrScriptsDisabled.Error()) {
			t.Errorf("result %v %q, want FAILED saying scripts are disabled", res.GetStatus(), res.GetMessage())
		}
	})

	t.Run("UnknownTypeIsInvalid", func(t *testing.T) {
		t.Parallel()
		b := setup(t, true)
		_, err := b.ex.Client.Run(t.Context(), &carillonv1.RunRequest{RunId: 1, JobId: 1, Script: &carillonv1.Script{Source: "x"}})
		if connect.CodeOf(err) != connect.CodeInvalidArgument {
			t.Errorf("Run(script of no type) = %v, want invalid_argument", err)
		}
	})

	// A script that starts a child and waits: the kill (or timeout) ends
	// the child too.
	const parent = "sleep 3600 &\necho \"child $!\"\nwait\n"
	for _, test := range []struct {
		name    string
		timeout int32
		stop    func(t *testing.T, b *testBundle)
		want    carillonv1.RunStatus
	}{
		{"KillEndsProcessGroup", 0, func(t *testing.T, b *testBundle) {
			t.Helper()
			if _, err := b.ex.Client.Kill(t.Context(), &carillonv1.KillRequest{JobId: 1}); err != nil {
				t.Fatal(err)
			}
		}, carillonv1.RunStatus_RUN_STATUS_KILLED},
		{"TimeoutEndsProcessGroup", 1, func(*testing.T, *testBundle) {}, carillonv1.RunStatus_RUN_STATUS_TIMED_OUT},
	} {
		t.Run(test.name, func(t *testing.T) {
			t.Parallel()
			if runtime.GOOS != "linux" {
				t.Skip("looks for the child in /proc")
			}
			need(t, "bash", "sh")
			b := setup(t, true)
			runScript(t, b, 1, carillonv1.ScriptType_SCRIPT_TYPE_SHELL, parent, "", test.timeout)
			pid := childPID(t, b.ex.Client)
			if !alive(pid) {
				t.Fatalf("child %d is not running", pid)
			}
			test.stop(t, b)
			if res := b.admin.Result(t, 1); res.GetStatus() != test.want {
				t.Errorf("result %v %q, want %v", res.GetStatus(), res.GetMessage(), test.want)
			}
			deadline := time.Now().Add(waitLimit)
			for alive(pid) {
				if time.Now().After(deadline) {
					t.Fatalf("child %d of the script survived it", pid)
				}
				time.Sleep(10 * time.Millisecond) // another process, not ours: polled for its end
			}
		})
	}
}

// childPID reads "child <pid>" from run 1's log as soon as it is there.
func childPID(t *testing.T, c carillonv1connect.ExecutorServiceClient) int {
	t.Helper()
	re := regexp.MustCompile(`child (\d+)`)
	deadline := time.Now().Add(waitLimit)
	for {
		page, err := c.ReadLog(t.Context(), &carillonv1.ReadLogRequest{RunId: 1})
		if err != nil {
			t.Fatal(err)
		}
		if m := re.FindStringSubmatch(page.GetContent()); m != nil {
			pid, _ := strconv.Atoi(m[1])
			return pid
		}
		if time.Now().After(deadline) {
			t.Fatal("the script never printed its child's pid")
		}
		time.Sleep(10 * time.Millisecond) // another process (the script) prints it: polled
	}
}

// alive says whether a process exists and is not a zombie.
func alive(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	return i < 0 || i+2 >= len(s) || s[i+2] != 'Z'
}
