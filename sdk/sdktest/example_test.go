package sdktest_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	carillonv1 "github.com/carillonhq/carillon/proto/carillon/v1"
	"github.com/carillonhq/carillon/sdk"
	"github.com/carillonhq/carillon/sdk/sdktest"
)

// Example tests a handler end to end: a real executor runs it for a fake
// admin, which gets its result.
func Example() {
	t := &testing.T{} // in a test: the test's own *testing.T, which stops them at its end
	admin := sdktest.NewAdmin(t, "secret")
	sdktest.Start(t, sdk.Config{AdminURLs: []string{admin.URL}, AccessToken: "secret"}, func(ex *sdk.Executor) {
		ex.HandleFunc("greet", func(_ context.Context, job *sdk.Job) error {
			if job.Param == "" {
				return fmt.Errorf("nobody to greet")
			}
			job.Logf("hello, %s", job.Param)
			return nil
		})
	})
	for id, param := range []string{"world", ""} {
		res := admin.Run(t, &carillonv1.RunRequest{RunId: int64(id + 1), JobId: 1, Handler: "greet", Param: param})
		fmt.Println(strings.TrimSpace(res.GetStatus().String() + " " + res.GetMessage()))
	}
	// Output:
	// RUN_STATUS_SUCCEEDED
	// RUN_STATUS_FAILED nobody to greet
}
