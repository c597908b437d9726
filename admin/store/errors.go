package store

import "errors"

var (
	// ErrNotFound is returned when the requested row does not exist.
	ErrNotFound = errors.New("store: not found")
	// ErrAlreadyExists is returned when a unique key is taken, such as a
	// group's app name.
	ErrAlreadyExists = errors.New("store: already exists")
	// ErrInUse is returned when deleting a row that others still refer to,
	// such as a group with jobs.
	ErrInUse = errors.New("store: in use")
	// ErrGroupNotFound is returned when a job names a group that does not exist.
	ErrGroupNotFound = errors.New("store: group not found")
	// ErrLocked is returned by Open when another admin holds the database.
	ErrLocked = errors.New("store: database is in use by another carillon admin")
)
