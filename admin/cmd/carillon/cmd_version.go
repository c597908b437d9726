package main

import (
	"fmt"
	"io"

	"github.com/carillonhq/carillon/admin/internal/version"
)

// printVersion runs "carillon version": the module version, the VCS
// revision and the Go version of this binary, one per line.
func printVersion(w io.Writer) error {
	info := version.Get()
	_, err := fmt.Fprintf(w, "carillon %s\nrevision %s\n%s\n", info.Version, info.Revision, info.GoVersion)
	return err
}
