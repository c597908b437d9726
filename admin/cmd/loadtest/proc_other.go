//go:build !linux

package main

import "syscall"

// childAttr sets nothing outside Linux: the admin is stopped on exit, but
// not if this process is killed.
func childAttr() *syscall.SysProcAttr { return nil }
