package sdktest_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	carillonv1 "github.com/carillonhq/carillon/proto/carillon/v1"
	"github.com/carillonhq/carillon/sdk"
	"github.com/carillonhq/carillon/sdk/sdktest"
)

// TestGreet is how a service tests a handler end to end with this package:
// a real executor runs it for a fake admin, which gets its result.
func TestGreet(t *testing.T) {
	admin := sdktest.NewAdmin(t, "secret")
	sdktest.Start(t, sdk.Config{AdminURLs: []string{admin.URL}, AccessToken: "secret"}, func(ex *sdk.Executor) {
		ex.HandleFunc("greet", func(_ context.Context, job *sdk.Job) error {
			if job.Param == "" {
				return errors.New("nobody to greet")
			}
			job.Logf("hello, %s", job.Param)
			return nil
		})
	})
	for id, c := range []struct{ param, want string }{
		{"world", "RUN_STATUS_SUCCEEDED"},
		{"", "RUN_STATUS_FAILED nobody to greet"},
	} {
		res := admin.Run(t, &carillonv1.RunRequest{RunId: int64(id + 1), JobId: 1, Handler: "greet", Param: c.param})
		if got := strings.TrimSpace(res.GetStatus().String() + " " + res.GetMessage()); got != c.want {
			t.Errorf("param %q: %s, want %s", c.param, got, c.want)
		}
	}
}
