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
	// ErrFull is returned by a write when the database's disk (or its size
	// limit) is full: nothing of the write was stored. Writes succeed again
	// once there is space.
	ErrFull = errors.New("store: the database's disk is full")
	// ErrReadOnly is returned by a write when the database file, its
	// directory or its file system is read-only.
	ErrReadOnly = errors.New("store: the database is read-only")
	// ErrLeaseLost is returned by a write of the fire path (the claims,
	// RunStore.Insert, RunStore.Route, RecordDispatches, the settles) of an admin
	// sharing a PostgreSQL database whose lease ran out or was adopted by
	// another admin: the runs it claimed are the adopter's to send and
	// record, and nothing was written.
	ErrLeaseLost = errors.New("store: this admin's lease on the database ran out; another admin adopts its runs")
)
