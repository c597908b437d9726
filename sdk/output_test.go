package sdk_test

import (
	"context"
	"errors"
	"maps"
	"strings"
	"testing"

	carillonv1 "github.com/carillonhq/carillon/proto/carillon/v1"
	"github.com/carillonhq/carillon/sdk"
	"github.com/carillonhq/carillon/sdk/sdktest"
)

// TestOutputs: a handler gets its run's inputs (RunRequest.inputs) in
// Job.Inputs, and what it publishes with SetOutput arrives with its
// result; a value that would take the run's outputs past
// MaxOutputsSize is refused and not published, and the run may still
// succeed with what it published before.
func TestOutputs(t *testing.T) {
	t.Parallel()
	admin := sdktest.NewAdmin(t, "")
	var tooLarge, emptyKey error
	sdktest.Start(t, sdk.Config{AdminURLs: []string{admin.URL}}, func(e *sdk.Executor) {
		e.Handle("transform", sdk.HandlerFunc(func(_ context.Context, job *sdk.Job) error {
			rows := job.Inputs["rows"]
			if err := job.SetOutput("seen", rows); err != nil {
				return err
			}
			if err := job.SetOutput("rows", rows+"0"); err != nil {
				return err
			}
			if err := job.SetOutput("rows", rows+"1"); err != nil { // replaced
				return err
			}
			tooLarge = job.SetOutput("big", strings.Repeat("x", sdk.MaxOutputsSize))
			emptyKey = job.SetOutput("", "v")
			return nil
		}))
	})
	res := admin.Run(t, &carillonv1.RunRequest{RunId: 1, JobId: 1, Handler: "transform", Inputs: map[string]string{"rows": "42"}})
	if res.GetStatus() != carillonv1.RunStatus_RUN_STATUS_SUCCEEDED {
		t.Fatalf("result %v %q, want SUCCEEDED", res.GetStatus(), res.GetMessage())
	}
	if want := map[string]string{"seen": "42", "rows": "421"}; !maps.Equal(res.GetOutputs(), want) {
		t.Errorf("outputs %v, want %v", res.GetOutputs(), want)
	}
	if !errors.Is(tooLarge, sdk.ErrOutputsTooLarge) {
		t.Errorf("SetOutput past the limit = %v, want ErrOutputsTooLarge", tooLarge)
	}
	if emptyKey == nil {
		t.Error("SetOutput with an empty key succeeded")
	}
	// A run without inputs reports no outputs when it publishes none.
	admin2 := sdktest.NewAdmin(t, "")
	sdktest.Start(t, sdk.Config{AdminURLs: []string{admin2.URL}}, func(e *sdk.Executor) {
		e.Handle("quiet", sdk.HandlerFunc(func(_ context.Context, job *sdk.Job) error {
			if job.Inputs != nil {
				return errors.New("inputs outside a workflow")
			}
			return nil
		}))
	})
	if res := admin2.Run(t, &carillonv1.RunRequest{RunId: 2, JobId: 2, Handler: "quiet"}); res.GetStatus() != carillonv1.RunStatus_RUN_STATUS_SUCCEEDED ||
		res.GetOutputs() != nil {
		t.Errorf("quiet run: %v %q, outputs %v; want SUCCEEDED without outputs", res.GetStatus(), res.GetMessage(), res.GetOutputs())
	}
}

// TestSetOutputLimit: the limit counts keys and values together; setting
// a key again counts its new value instead of its old one.
func TestSetOutputLimit(t *testing.T) {
	t.Parallel()
	var job sdk.Job
	half := strings.Repeat("v", sdk.MaxOutputsSize/2-1)
	if err := job.SetOutput("a", half); err != nil {
		t.Fatal(err)
	}
	if err := job.SetOutput("b", half); err != nil {
		t.Fatalf("two halves with their keys: %v", err)
	}
	if err := job.SetOutput("c", ""); !errors.Is(err, sdk.ErrOutputsTooLarge) {
		t.Fatalf("one more key: %v, want ErrOutputsTooLarge", err)
	}
	if err := job.SetOutput("a", half+"v"); !errors.Is(err, sdk.ErrOutputsTooLarge) {
		t.Fatalf("a longer a: %v, want ErrOutputsTooLarge", err)
	}
	if err := job.SetOutput("a", "short"); err != nil {
		t.Fatalf("a shorter a: %v", err)
	}
	if err := job.SetOutput("c", "fits now"); err != nil {
		t.Fatal(err)
	}
	if got := job.Outputs(); len(got) != 3 || got["a"] != "short" || got["c"] != "fits now" {
		t.Errorf("outputs %v", got)
	}
	if err := job.SetOutput("bad", "\xff"); err == nil {
		t.Error("SetOutput took invalid UTF-8")
	}
}
