package sdk_test

import (
	"maps"
	"os/exec"
	"strings"
	"testing"

	carillonv1 "github.com/carillonhq/carillon/proto/carillon/v1"
	"github.com/carillonhq/carillon/sdk"
	"github.com/carillonhq/carillon/sdk/sdktest"
)

// TestScriptContext: a script gets its run's inputs as CARILLON_INPUT_<KEY>
// variables (the key sanitized) and as a JSON file, and publishes outputs
// as key=value lines in CARILLON_OUTPUTS_FILE; outputs over the limit
// fail the run (what fitted is reported with the failure, as for a handler
// that returned an error after SetOutput).
func TestScriptContext(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("no bash on this machine")
	}
	admin := sdktest.NewAdmin(t, "tok")
	ex := sdktest.Start(t, sdk.Config{AdminURLs: []string{admin.URL}, AccessToken: "tok", ScriptsEnabled: true}, nil)
	script := func(runID int64, inputs map[string]string, source string) *carillonv1.RunResult {
		t.Helper()
		return admin.Run(t, &carillonv1.RunRequest{RunId: runID, JobId: runID, Inputs: inputs,
			Script: &carillonv1.Script{Type: carillonv1.ScriptType_SCRIPT_TYPE_SHELL, Source: source}})
	}

	res := script(1, map[string]string{"rows": "42", "the-file.path": "/tmp/a b"}, `
echo "env: $CARILLON_INPUT_ROWS|$CARILLON_INPUT_THE_FILE_PATH"
echo "file: $(cat "$CARILLON_INPUTS_FILE")"
printf 'count=%s\nmsg=a=b\r\nno equals sign\n=empty key\n' "$((CARILLON_INPUT_ROWS + 1))" >> "$CARILLON_OUTPUTS_FILE"
`)
	if res.GetStatus() != carillonv1.RunStatus_RUN_STATUS_SUCCEEDED {
		t.Fatalf("result %v %q, want SUCCEEDED", res.GetStatus(), res.GetMessage())
	}
	if want := map[string]string{"count": "43", "msg": "a=b"}; !maps.Equal(res.GetOutputs(), want) {
		t.Errorf("outputs %v, want %v", res.GetOutputs(), want)
	}
	log := readWholeLog(t, ex.Client, 1)
	for _, want := range []string{"env: 42|/tmp/a b\n", `file: {"rows":"42","the-file.path":"/tmp/a b"}` + "\n"} {
		if !strings.Contains(log, want) {
			t.Errorf("log lacks %q:\n%s", want, log)
		}
	}

	// Without inputs: an empty object, and no outputs.
	res = script(2, nil, `echo "file: $(cat "$CARILLON_INPUTS_FILE") $CARILLON_INPUT_ROWS"; test -f "$CARILLON_OUTPUTS_FILE"`)
	if res.GetStatus() != carillonv1.RunStatus_RUN_STATUS_SUCCEEDED || res.GetOutputs() != nil {
		t.Fatalf("result %v %q, outputs %v; want SUCCEEDED, none", res.GetStatus(), res.GetMessage(), res.GetOutputs())
	}
	if log, want := readWholeLog(t, ex.Client, 2), "file: {} \n"; !strings.Contains(log, want) {
		t.Errorf("log lacks %q:\n%s", want, log)
	}

	// Two values that together pass the limit fail the run.
	res = script(3, nil, `v=$(head -c 40000 /dev/zero | tr '\0' x); printf 'a=%s\nb=%s\n' "$v" "$v" > "$CARILLON_OUTPUTS_FILE"`)
	if res.GetStatus() != carillonv1.RunStatus_RUN_STATUS_FAILED || !strings.Contains(res.GetMessage(), sdk.ErrOutputsTooLarge.Error()) {
		t.Errorf("result %v %q, want FAILED for outputs too large", res.GetStatus(), res.GetMessage())
	}
}
