package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/carillonhq/carillon/admin/internal/testca"
)

// TestCLITLS drives the CLI against an admin served over https with a
// certificate of a CA made in the test: --ca-file (or CARILLON_CA_FILE)
// trusts the CA, login keeps it in the config file for later commands, and
// without it or with another CA the command fails saying why.
func TestCLITLS(t *testing.T) {
	t.Parallel()
	ca := testca.New(t, "CLI test CA")
	leaf := ca.Leaf(t)
	url := serveAdmin(t, &leaf)

	b := newCLI(t)
	dir := b.home
	cfg := filepath.Join(dir, "config.json")
	must, fails := b.must, func(want int, wantErr string, args ...string) { b.fails(want, wantErr, args...) }

	must(testPassword+"\n", "login", "--server", url, "--user", "admin", "--password-stdin", "--config", cfg, "--ca-file", ca.CertFile)
	// The config file remembers the CA file for its server.
	must("", "group", "create", "tls", "--config", cfg)
	if out := must("", "group", "list", "--config", cfg); !strings.Contains(out, "tls") {
		t.Errorf("group list over https: %q", out)
	}

	noCA := filepath.Join(dir, "no-ca.json")
	fails(exitUnavailable, "x509: certificate signed by unknown authority; the admin's certificate is not signed by a CA this system trusts: pass the CA's certificate (PEM) with --ca-file",
		"whoami", "--server", url, "--config", noCA)
	other := testca.New(t, "Another CA")
	fails(exitUnavailable, "x509: certificate signed by unknown authority; the admin's certificate is not signed by a CA in "+other.CertFile,
		"group", "list", "--config", cfg, "--ca-file", other.CertFile)
	notPEM := filepath.Join(dir, "not.pem")
	if err := os.WriteFile(notPEM, []byte("not a certificate\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	fails(exitFailure, "no PEM certificate", "group", "list", "--config", cfg, "--ca-file", notPEM)

	b.env = []string{"CARILLON_CA_FILE=" + ca.CertFile}
	envCfg := filepath.Join(dir, "env.json")
	must(testPassword+"\n", "login", "--server", url, "--user", "admin", "--password-stdin", "--config", envCfg)
	if out := must("", "group", "list", "--config", envCfg); !strings.Contains(out, "tls") {
		t.Errorf("group list with CARILLON_CA_FILE: %q", out)
	}

	// A CA file named relative to the working directory: login keeps its
	// absolute name, which later commands find from anywhere.
	pem, err := os.ReadFile(ca.CertFile)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(b.dir, "ca.pem"), pem, 0o600); err != nil {
		t.Fatal(err)
	}
	b.env = nil
	relCfg := filepath.Join(dir, "relative.json")
	must(testPassword+"\n", "login", "--server", url, "--user", "admin", "--password-stdin", "--config", relCfg, "--ca-file", "ca.pem")
	if saved, err := os.ReadFile(relCfg); err != nil || !strings.Contains(string(saved), `"caFile": "`+filepath.Join(b.dir, "ca.pem")+`"`) {
		t.Errorf("login --ca-file ca.pem saved (%v):\n%s", err, saved)
	}
	b.dir = t.TempDir()
	if out := must("", "group", "list", "--config", relCfg); !strings.Contains(out, "tls") {
		t.Errorf("group list from another directory with the saved CA file: %q", out)
	}
}
