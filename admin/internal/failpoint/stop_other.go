//go:build !unix

package failpoint

// stopProcess does nothing where there is no SIGSTOP.
func stopProcess() {}
