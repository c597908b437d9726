package store

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestJSONRows: the list parameter of the hot statements reads back as the
// values put in, whatever the strings hold.
func TestJSONRows(t *testing.T) {
	t.Parallel()
	strs := []string{"", "plain message", `say "hi"`, `back\slash`, "line\nbreak\ttab", "ünïcödé ✓", "\x7f", "bad \xff utf-8"}
	var list jsonRows
	for i, s := range strs {
		list.next().int(int64(i)).str(s)
	}
	var got [][]any
	if err := json.Unmarshal([]byte(list.String()), &got); err != nil {
		t.Fatalf("%s: %v", list.String(), err)
	}
	var want [][]any
	for i, s := range strs {
		if s == "bad \xff utf-8" {
			s = "bad \uFFFD utf-8" // invalid UTF-8 is replaced, as encoding/json does
		}
		want = append(want, []any{float64(i), s})
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("read back (-want +got):\n%s", diff)
	}
}
