package server

import (
	"fmt"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/protobuf/reflect/protoreflect"

	carillonv1 "github.com/carillonhq/carillon/proto/carillon/v1"
)

// TestEveryRPCHasItsRow: rpcs has one row per RPC of every Carillon
// service and none for RPCs that do not exist; RegistryService's rows, and
// only theirs, are for executors.
func TestEveryRPCHasItsRow(t *testing.T) {
	var want []string
	for _, f := range []protoreflect.FileDescriptor{
		carillonv1.File_carillon_v1_registry_proto, carillonv1.File_carillon_v1_group_proto, carillonv1.File_carillon_v1_job_proto,
		carillonv1.File_carillon_v1_run_proto, carillonv1.File_carillon_v1_report_proto, carillonv1.File_carillon_v1_user_proto,
		carillonv1.File_carillon_v1_workflow_proto, carillonv1.File_carillon_v1_calendar_proto, carillonv1.File_carillon_v1_apply_proto,
	} {
		for i := range f.Services().Len() {
			s := f.Services().Get(i)
			for j := range s.Methods().Len() {
				want = append(want, fmt.Sprintf("/%s/%s", s.FullName(), s.Methods().Get(j).Name()))
			}
		}
	}
	var got []string
	for proc, r := range rpcs {
		got = append(got, proc)
		if executor := strings.HasPrefix(proc, "/carillon.v1.RegistryService/"); (r.access == accessExecutor) != executor {
			t.Errorf("%s: access %s", proc, r.access)
		}
	}
	sort.Strings(want)
	sort.Strings(got)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("rows of rpcs (-every RPC +rows):\n%s", diff)
	}
}
