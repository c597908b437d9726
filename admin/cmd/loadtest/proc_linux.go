package main

import "syscall"

// childAttr puts the admin in its own process group, so the terminal's
// Ctrl-C reaches only this tool, which stops the executors first and then
// the admin; the admin is killed if this process dies.
func childAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}
