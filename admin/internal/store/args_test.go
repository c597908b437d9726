package store

import (
	"slices"
	"testing"
)

// TestArgs checks that args numbers each placeholder by its argument's
// place, across single values and lists.
func TestArgs(t *testing.T) {
	t.Parallel()
	var a args
	q := "a = " + a.add("x") + " AND b IN (" + addList(&a, []int64{7, 8, 9}) + ") LIMIT " + a.add(10)
	if want := "a = $1 AND b IN ($2, $3, $4) LIMIT $5"; q != want {
		t.Errorf("got %q, want %q", q, want)
	}
	if want := []any{"x", int64(7), int64(8), int64(9), 10}; !slices.Equal(a, want) {
		t.Errorf("args %v, want %v", a, want)
	}
}

// TestPlaceholders checks the fixed shapes: a row of placeholders, and
// rows of them numbered one after another.
func TestPlaceholders(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ got, want string }{
		{placeholders(1, 1), "$1"},
		{placeholders(3, 3), "$3, $4, $5"},
		{rowsOf(1, 2), "($1, $2)"},
		{rowsOf(3, 2), "($1, $2), ($3, $4), ($5, $6)"},
	} {
		if c.got != c.want {
			t.Errorf("got %q, want %q", c.got, c.want)
		}
	}
}
