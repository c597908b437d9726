//go:build !unix

package sdk

import "os/exec"

// ownProcessGroup does nothing on this platform: cancelling a script kills
// the interpreter only, not the processes it started.
func ownProcessGroup(*exec.Cmd) {}
