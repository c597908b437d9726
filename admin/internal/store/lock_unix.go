//go:build unix

package store

import (
	"errors"
	"fmt"
	"os"
	"syscall"
)

// fileLock is an exclusive advisory lock (flock) on a file beside the
// database. The kernel releases it when the process dies, so a crashed admin
// never leaves a stale lock behind.
type fileLock struct{ f *os.File }

func lockFile(path string) (*fileLock, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600) //nolint:gosec // the database path comes from the operator's --db
	if err != nil {
		return nil, fmt.Errorf("store: lock %s: %w", path, err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		_ = f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, fmt.Errorf("%w (lock file %s is held; stop the other admin or use another --db)", ErrLocked, path)
		}
		return nil, fmt.Errorf("store: lock %s: %w", path, err)
	}
	return &fileLock{f: f}, nil
}

func (l *fileLock) release() error {
	return l.f.Close() // closing the descriptor drops the flock
}
