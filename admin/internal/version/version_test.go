package version

import (
	"runtime/debug"
	"testing"
)

func TestFromBuildInfo(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		bi   debug.BuildInfo
		want Info
	}{
		{"installed at a version", debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "v1.4.0"},
			Settings: []debug.BuildSetting{{Key: "vcs.revision", Value: "abc123"}, {Key: "vcs.modified", Value: "false"}}},
			Info{Version: "v1.4.0", Revision: "abc123", GoVersion: "go1.26.8"}},
		{"a dirty checkout", debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "(devel)"},
			Settings: []debug.BuildSetting{{Key: "vcs.revision", Value: "abc123"}, {Key: "vcs.modified", Value: "true"}}},
			Info{Version: "(devel)", Revision: "abc123-dirty", GoVersion: "go1.26.8"}},
		{"-buildvcs=false", debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "(devel)"}},
			Info{Version: "(devel)", Revision: Unknown, GoVersion: "go1.26.8"}},
		{"no module version", debug.BuildInfo{GoVersion: "go1.26.8"},
			Info{Version: Unknown, Revision: Unknown, GoVersion: "go1.26.8"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if got := fromBuildInfo(&tc.bi); got != tc.want {
				t.Errorf("fromBuildInfo = %+v, want %+v", got, tc.want)
			}
		})
	}
}

func TestGet(t *testing.T) {
	t.Parallel()
	got := Get()
	if got.GoVersion == "" || got.Version == "" || got.Revision == "" {
		t.Errorf("Get() = %+v: want every field set (Unknown at worst)", got)
	}
}

// TestWithStamp: a revision stamped with -ldflags -X stands in for a
// build without VCS information, never for the toolchain's own.
func TestWithStamp(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct{ have, stamped, want string }{
		{Unknown, "", Unknown},
		{Unknown, "abc123", "abc123"},
		{"def456", "abc123", "def456"},
		{"def456-dirty", "", "def456-dirty"},
	} {
		if got := withStamp(Info{Revision: tt.have}, tt.stamped).Revision; got != tt.want {
			t.Errorf("withStamp(%q, %q) = %q, want %q", tt.have, tt.stamped, got, tt.want)
		}
	}
}
