// Package version tells which build of Carillon is running: its module
// version, the VCS revision it was built from and the Go version that
// built it, as the Go toolchain stamped them into the binary.
package version

import (
	"runtime"
	"runtime/debug"
	"sync"
)

// Unknown is what Info says of a field the binary does not carry: a
// revision when built with -buildvcs=false or outside a checkout, a version
// when built from a checkout rather than by "go install …@version".
const Unknown = "unknown"

// Info is a build's identity.
type Info struct {
	// Version is the module version, "v1.2.3" when installed with
	// "go install github.com/carillonhq/carillon/admin/cmd/carillon@v1.2.3";
	// "(devel)" when built from a checkout; Unknown without build info.
	Version string
	// Revision is the VCS commit, with "-dirty" appended when the checkout
	// had changes, or Unknown.
	Revision string
	// GoVersion is the Go toolchain's version, "go1.26.8".
	GoVersion string
}

// Get returns the running binary's Info.
func Get() Info { return get() }

// revision is the VCS revision a build stamps where the toolchain has no
// VCS information to stamp (a container build, whose context has no
// .git): go build -ldflags "-X
// github.com/carillonhq/carillon/admin/internal/version.revision=<commit>"
// (the Dockerfile's REVISION build argument). The toolchain's own
// vcs.revision, when there is one, wins.
var revision string

var get = sync.OnceValue(func() Info {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		bi = &debug.BuildInfo{}
	}
	return withStamp(fromBuildInfo(bi), revision)
})

// withStamp returns info with the stamped revision when info has none.
func withStamp(info Info, stamped string) Info {
	if info.Revision == Unknown && stamped != "" {
		info.Revision = stamped
	}
	return info
}

// fromBuildInfo reads an Info from the toolchain's build information.
func fromBuildInfo(bi *debug.BuildInfo) Info {
	info := Info{Version: bi.Main.Version, Revision: Unknown, GoVersion: bi.GoVersion}
	if info.Version == "" {
		info.Version = Unknown
	}
	if info.GoVersion == "" {
		info.GoVersion = runtime.Version()
	}
	dirty := false
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			info.Revision = s.Value
		case "vcs.modified":
			dirty = s.Value == "true"
		}
	}
	if dirty && info.Revision != Unknown {
		info.Revision += "-dirty"
	}
	return info
}
