package main

import (
	"testing"

	"google.golang.org/protobuf/reflect/protoreflect"

	carillonv1 "github.com/carillonhq/carillon/proto/carillon/v1"
)

// TestRuleMax reads the limits the CLI states from the .proto's
// buf.validate rules, and panics for a field without one.
func TestRuleMax(t *testing.T) {
	if got := ruleMax(&carillonv1.ListRunsRequest{}, "page_size"); got != 500 {
		t.Errorf("ListRunsRequest.page_size: %d, want 500", got)
	}
	if got := ruleMax(&carillonv1.PreviewScheduleRequest{}, "count"); got != 100 {
		t.Errorf("PreviewScheduleRequest.count: %d, want 100", got)
	}
	for _, name := range []protoreflect.Name{"job_id", "no_such_field"} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("ruleMax(ListRunsRequest, %s): no panic, want one", name)
				}
			}()
			ruleMax(&carillonv1.ListRunsRequest{}, name)
		}()
	}
}
