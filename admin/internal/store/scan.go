package store

import (
	"fmt"
	"time"
)

// Scanners for the reads of the fire path (scanSettled, DueJobs). Into
// an *int32, or a type on one as the enums are, database/sql converts a
// driver's int64 by formatting it as a string and parsing that back; into
// an *int64 or a sql.Null* it goes by reflection. These take the int64 as
// it is: a settle scans twenty columns of every run it settles. Each is a
// pointer in a struct, which an interface holds without an allocation.

// intInto scans an INTEGER column into *p.
type intInto[T ~int8 | ~int32 | ~int64] struct{ p *T }

// intCol returns the scanner of an INTEGER column into *p.
func intCol[T ~int8 | ~int32 | ~int64](p *T) intInto[T] { return intInto[T]{p} }

// Scan implements sql.Scanner.
func (c intInto[T]) Scan(v any) error {
	x, ok := v.(int64)
	if !ok {
		return fmt.Errorf("store: want an integer, got %T", v)
	}
	*c.p = T(x)
	return nil
}

// boolInto scans an INTEGER column of 0 or 1 into *p.
type boolInto struct{ p *bool }

// Scan implements sql.Scanner.
func (c boolInto) Scan(v any) error {
	x, ok := v.(int64)
	if !ok {
		return fmt.Errorf("store: want an integer, got %T", v)
	}
	*c.p = x != 0
	return nil
}

// millisInto scans a nullable column of Unix milliseconds into *p, as
// fromMillis reads it: the zero time for null.
type millisInto struct{ p *time.Time }

// Scan implements sql.Scanner.
func (c millisInto) Scan(v any) error {
	switch x := v.(type) {
	case int64:
		*c.p = time.UnixMilli(x)
	case nil:
		*c.p = time.Time{}
	default:
		return fmt.Errorf("store: want milliseconds or null, got %T", v)
	}
	return nil
}
