package main

import (
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/carillonhq/carillon/admin/internal/version"
)

// versionCmd is "carillon version": the module version, the VCS revision
// and the Go version of this binary, one per line.
func versionCmd(e *cmdEnv) *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print this binary's module version, VCS revision and Go version",
		Args:  exactArgs(0, "no arguments"),
		RunE: func(*cobra.Command, []string) error {
			e.ran = true
			return printVersion(e.io.out)
		},
	}
}

// versionLine is the version --version prints: the module version, and the
// revision when the binary carries one.
func versionLine() string {
	info := version.Get()
	if info.Revision == version.Unknown {
		return info.Version
	}
	return info.Version + " (" + info.Revision + ")"
}

// printVersion prints the module version, the VCS revision and the Go
// version of this binary, one per line.
func printVersion(w io.Writer) error {
	info := version.Get()
	_, err := fmt.Fprintf(w, "carillon %s\nrevision %s\n%s\n", info.Version, info.Revision, info.GoVersion)
	return err
}
