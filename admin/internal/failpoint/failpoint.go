// Package failpoint stops the admin process at named points of its code,
// for the tests that freeze an admin exactly there, the way a long GC
// pause, a frozen VM or CPU throttling can (admin/cmd/carillon's
// TestFreeze). It does nothing unless the environment variable Env names
// a directory when the process starts; then a point stops the process
// (SIGSTOP, on Unix) once for each file named after the point that a test
// creates in that directory, and removes the file: the test knows from
// its removal that the process stopped, and continues it with SIGCONT.
package failpoint

import (
	"os"
	"path/filepath"
)

// Env is the environment variable naming the directory of armed points.
const Env = "CARILLON_FAILPOINTS"

// Points of the fire path.
const (
	// CallScheduled is just before the call that sends scheduled runs
	// to an executor, after the admin's last look at its lease.
	CallScheduled = "call-scheduled"
	// CallManual is just before the call that sends a TriggerJob run.
	CallManual = "call-manual"
)

// dir is Env's directory, read once: "" disarms every point.
var dir = os.Getenv(Env)

// Stop stops the process at the point name, once for each time a test
// armed it, and returns when the process is continued. Unarmed, as in
// production, it costs the comparison of a string.
func Stop(name string) {
	if dir == "" {
		return
	}
	if os.Remove(filepath.Join(dir, name)) == nil {
		stopProcess()
	}
}
