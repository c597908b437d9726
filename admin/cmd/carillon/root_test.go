package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/spf13/cobra"
)

// leaves returns the command paths of every runnable command of the tree
// ("job create"), cobra's own included.
func leaves(t *testing.T) [][]string {
	t.Helper()
	var out [][]string
	var walk func(c *cobra.Command, path []string)
	walk = func(c *cobra.Command, path []string) {
		for _, sub := range c.Commands() {
			if sub.Hidden {
				continue
			}
			p := append(slices.Clone(path), sub.Name())
			out = append(out, p)
			walk(sub, p)
		}
	}
	root := newRoot(&cmdEnv{})
	root.InitDefaultHelpCmd()
	root.InitDefaultCompletionCmd()
	walk(root, nil)
	if len(out) < 40 {
		t.Fatalf("only %d commands in the tree: %q", len(out), out)
	}
	return out
}

// TestRootCommand runs carillon alone (the commands, and no server or
// database), the help of every command, completion for every shell, global
// flags before and after the command, and a misspelt command.
func TestRootCommand(t *testing.T) {
	t.Parallel()
	b := newCLI(t)
	code, out, errOut := b.run("")
	if code != 0 || !strings.Contains(out, "Client commands") || !strings.Contains(out, "  serve ") || !strings.Contains(out, "  job ") ||
		!strings.Contains(out, "Exit codes:") || errOut != "" {
		t.Errorf("carillon: exit %d, stdout %q, stderr %q; want the commands", code, out, errOut)
	}
	if entries, err := os.ReadDir(b.dir); err != nil || len(entries) != 0 {
		t.Errorf("carillon alone left %v in its directory (%v); want nothing", entries, err)
	}
	if _, err := os.Stat(filepath.Join(b.home, ".config")); !os.IsNotExist(err) {
		t.Errorf("carillon alone made a config directory: %v", err)
	}

	for _, path := range leaves(t) {
		args := append(slices.Clone(path), "--help")
		code, out, errOut := b.run("", args...)
		name := "carillon " + strings.Join(path, " ")
		if code != 0 || errOut != "" || !strings.Contains(out, "Usage:\n  "+name) {
			t.Errorf("%s --help: exit %d, stderr %q, stdout %q", name, code, errOut, out)
			continue
		}
		// A description above the usage.
		if first, _, _ := strings.Cut(out, "\n"); strings.TrimSpace(first) == "" || strings.HasPrefix(first, "Usage:") {
			t.Errorf("%s --help has no description: %q", name, out)
		}
	}

	for _, shell := range []string{"bash", "zsh", "fish", "powershell"} {
		if out := b.must("", "completion", shell); !strings.Contains(out, "carillon") || len(out) < 500 {
			t.Errorf("completion %s: %.200q", shell, out)
		}
	}
	// Completion completes commands, and flags, which cobra parses.
	if out := b.must("", "__complete", "jo"); !strings.Contains(out, "job\t") {
		t.Errorf("completing jo: %q", out)
	}
	if out := b.must("", "__complete", "job", "create", "--ret"); !strings.Contains(out, "--retry-delay") || !strings.Contains(out, "--retries") {
		t.Errorf("completing job create --ret: %q", out)
	}
	if out := b.must("", "__complete", "serve", "--log-level", ""); !strings.Contains(out, "debug\n") {
		t.Errorf("completing serve --log-level: %q", out)
	}

	// Global flags before or after the command: both reach the server
	// named, which does not answer.
	for _, args := range [][]string{
		{"--server", "http://127.0.0.1:1", "--api-token", "x", "group", "list"},
		{"group", "list", "--server", "http://127.0.0.1:1", "--api-token", "x"},
		{"--json", "group", "--server", "http://127.0.0.1:1", "list", "--api-token", "x"},
	} {
		b.fails(exitUnavailable, "carillon: unavailable: ", args...)
	}

	b.fails(exitUsage, `unknown command "jbo" for "carillon"`, "jbo", "list")
	b.fails(exitUsage, `unknown command "lsit" for "carillon job"`, "job", "lsit")
	b.fails(exitUsage, "unknown flag: --nope", "--nope")
	b.fails(exitUsage, "unknown flag: --api-tokne", "job", "list", "--api-tokne", "x")
	if out := b.must("", "--version"); !strings.HasPrefix(out, "carillon ") {
		t.Errorf("--version: %q", out)
	}
	if out := b.must("", "job"); !strings.Contains(out, "Available Commands:") || !strings.Contains(out, "preview") {
		t.Errorf("carillon job: %q", out)
	}
}

// TestHelpShowsNoSecret runs the help of every command, and serve
// --print-config, with a secret in every variable that holds one: none
// shows up.
func TestHelpShowsNoSecret(t *testing.T) {
	t.Parallel()
	b := newCLI(t)
	secrets := map[string]string{
		"CARILLON_API_TOKEN":      "carillon_t_apitokensecret",
		"CARILLON_TOKEN":          "executortokensecret",
		"CARILLON_ADMIN_PASSWORD": "adminpasswordsecret",
		"CARILLON_SMTP_PASSWORD":  "smtppasswordsecret",
	}
	secrets["CARILLON_SMTP_OAUTH2_TOKEN"] = "smtptokensecret"
	secrets["CARILLON_OIDC_CLIENT_SECRET"] = "oidcclientsecret"
	b.env = append(b.env, "CARILLON_SMTP_USERNAME=alarms") // the token's account
	for k, v := range secrets {
		b.env = append(b.env, k+"="+v)
	}
	check := func(what, out string) {
		t.Helper()
		for k, v := range secrets {
			if strings.Contains(out, v) {
				t.Errorf("%s shows the value of %s", what, k)
			}
		}
	}
	_, out, errOut := b.run("", "--help")
	check("carillon --help", out+errOut)
	for _, path := range leaves(t) {
		_, out, errOut := b.run("", append(slices.Clone(path), "--help")...)
		check("carillon "+strings.Join(path, " ")+" --help", out+errOut)
	}
	out = b.must("", "serve", "--print-config")
	check("serve --print-config", out)
	for _, opt := range []string{"token", "admin-password", "smtp-password", "smtp-oauth2-token", "oidc-client-secret"} {
		if !strings.Contains(out, "\n"+opt+" ") || !strings.Contains(out, "(set)") {
			t.Errorf("serve --print-config does not say %s is set: %q", opt, out)
		}
	}
}
