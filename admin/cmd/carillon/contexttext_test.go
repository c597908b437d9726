package main

import "testing"

// TestContextText: run get shows inputs and outputs as key=value pairs in
// key order, quoting values that would read ambiguously.
func TestContextText(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		in   map[string]string
		want string
	}{
		{nil, "-"},
		{map[string]string{"rows": "42", "path": "/tmp/a b", "empty": "", "eq": "a=b"}, `empty="", eq="a=b", path="/tmp/a b", rows=42`},
	} {
		if got := contextText(c.in); got != c.want {
			t.Errorf("contextText(%v) = %s, want %s", c.in, got, c.want)
		}
	}
}
