//go:build unix

package failpoint

import "syscall"

// stopProcess stops this process until it receives SIGCONT.
func stopProcess() { _ = syscall.Kill(syscall.Getpid(), syscall.SIGSTOP) }
