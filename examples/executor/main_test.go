package main

import (
	"bytes"
	"errors"
	"flag"
	"strings"
	"testing"
)

// TestHelpShowsNoToken: --help names where the token comes from, never the
// token itself from CARILLON_TOKEN.
func TestHelpShowsNoToken(t *testing.T) {
	const token = "carillon_x_secret_from_the_environment"
	t.Setenv("CARILLON_TOKEN", token)
	var out bytes.Buffer
	if err := run([]string{"--help"}, &out); !errors.Is(err, flag.ErrHelp) {
		t.Fatalf("--help: %v", err)
	}
	if strings.Contains(out.String(), token) || !strings.Contains(out.String(), "carillon executor-token") {
		t.Errorf("--help printed the token, or not where to read it:\n%s", out.String())
	}
}
