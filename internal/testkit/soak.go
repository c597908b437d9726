// Package testkit holds what Carillon's tests share across packages,
// the SDK's and the admin's: the soak tier's switch (Soak), a logger
// (Logger), and a test's own ExecutorService or RegistryService served on
// loopback (ServeExecutor, ServeRegistry). What needs the admin's own
// packages is in admin/internal/dbtest (a store over each backend) and
// admin/internal/admintest (a served admin, a real SDK executor).
package testkit

import (
	"os"
	"testing"
)

// SoakEnv is the environment variable that runs the soak tier: set to 1,
// the tests that kill, freeze or restart processes for minutes run too.
// .ci/run sets it; a developer's go test ./... leaves them out.
const SoakEnv = "CARILLON_SOAK"

// Soak skips t unless SoakEnv is 1; what says what the test does and how
// long it takes.
func Soak(t testing.TB, what string) {
	t.Helper()
	if os.Getenv(SoakEnv) != "1" {
		t.Skipf("soak tier (%s): run it with %s=1", what, SoakEnv)
	}
}
