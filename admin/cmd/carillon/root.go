package main

import (
	"context"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	carillonv1 "github.com/carillonhq/carillon/proto/carillon/v1"
)

// stdio is a command's standard streams.
type stdio struct {
	in       io.Reader
	out, err io.Writer
}

// run runs one command line, with the environment and working directory
// of proc, and returns the process's exit code.
func run(ctx context.Context, args []string, std stdio, proc procEnv) int {
	e := &cmdEnv{io: std, proc: proc}
	root := newRoot(e)
	root.SetArgs(args)
	root.SetIn(std.in)
	root.SetOut(std.out)
	root.SetErr(std.err)
	err := root.ExecuteContext(ctx)
	if e.http != nil {
		// The command line's connections end with it, as with its
		// process, also in a process that goes on (the tests'): an admin
		// stopping then waits for no idle HTTP/2 connection of it.
		e.http.CloseIdleConnections()
	}
	if err != nil && !e.ran {
		// Cobra's own errors, before any command ran: an unknown command
		// or flag, a wrong number of arguments.
		err = usageError{err}
	}
	return exitCode(std.err, err)
}

const rootLong = `Carillon is a distributed job scheduler: the admin ("carillon serve") stores
executor groups and jobs, schedules them and routes each fire to an executor
built on the Go SDK. The other commands are clients of a running admin's API.

Client commands find the admin and a credential in this order: the flags
--server and --api-token, the environment variables CARILLON_SERVER and
CARILLON_API_TOKEN, then the session "carillon login" saved in the config
file (for the server it logged in to).`

const exitCodesText = `
Exit codes: 0 ok, 1 other failure, 2 usage, 3 unauthenticated (log in again),
4 permission denied, 5 not found, 6 refused (invalid argument, already exists,
failed precondition, rate limited), 7 unavailable. Errors go to stderr as
"carillon: <code>: <message>".
`

// Command groups of the root's help.
const (
	groupAdmin  = "admin"
	groupClient = "client"
)

// newRoot builds the command tree; e receives the global flags.
func newRoot(e *cmdEnv) *cobra.Command {
	root := &cobra.Command{
		Use:           "carillon",
		Short:         "Carillon: a distributed job scheduler, its admin and its command-line client",
		Long:          rootLong,
		Version:       versionLine(),
		SilenceErrors: true,
		SilenceUsage:  true,
		// No Run: without a command, the help (and no server started);
		// an unknown command is cobra's error, with suggestions.
	}
	root.SetVersionTemplate("carillon {{.Version}}\n")
	root.SetUsageTemplate(root.UsageTemplate() + "{{if not .HasParent}}" + exitCodesText + "{{end}}")
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return usageError{err} })
	root.AddGroup(
		&cobra.Group{ID: groupAdmin, Title: "Run the admin (on its host):"},
		&cobra.Group{ID: groupClient, Title: "Client commands (they call a running admin):"},
	)
	e.globalFlags(root)

	for _, c := range []*cobra.Command{serveCmd(e), resetAdminPasswordCmd(e), migrateCmd(e), healthcheckCmd(e), versionCmd(e)} {
		c.GroupID = groupAdmin
		root.AddCommand(c)
	}
	for _, c := range []*cobra.Command{
		loginCmd(e), logoutCmd(e), whoamiCmd(e),
		groupCmd(e), jobCmd(e), workflowCmd(e), calendarCmd(e), runCmd(e), userCmd(e), tokenCmd(e),
		auditCmd(e), executorTokenCmd(e), dashboardCmd(e), importCmd(e), applyCmd(e), exportCmd(e),
	} {
		c.GroupID = groupClient
		root.AddCommand(c)
	}
	completeValues(root)
	return root
}

// flagValues are the values of the flags that take one of a few words,
// for shell completion, by flag name.
var flagValues = map[string][]string{
	"route":       enumWords(carillonv1.RouteStrategy(0).Descriptor(), "ROUTE_STRATEGY_"),
	"block":       enumWords(carillonv1.BlockStrategy(0).Descriptor(), "BLOCK_STRATEGY_"),
	"misfire":     enumWords(carillonv1.MisfireStrategy(0).Descriptor(), "MISFIRE_STRATEGY_"),
	"status":      enumWords(carillonv1.RunStatus(0).Descriptor(), "RUN_STATUS_"),
	"script-type": enumWords(carillonv1.ScriptType(0).Descriptor(), "SCRIPT_TYPE_"),
	"protocol":    {"carillon", "xxl-job"},
	"role":        enumWords(carillonv1.Role(0).Descriptor(), "ROLE_"),
}

// completeValues makes the shell complete the values of flagValues' flags
// wherever a command has one.
func completeValues(c *cobra.Command) {
	for name, values := range flagValues {
		if c.Flags().Lookup(name) != nil && c.Flags().Lookup(name).Value.Type() == "string" {
			_ = c.RegisterFlagCompletionFunc(name, cobra.FixedCompletions(values, cobra.ShellCompDirectiveNoFileComp))
		}
	}
	for _, sub := range c.Commands() {
		completeValues(sub)
	}
}

// noun makes a command that only groups subcommands ("carillon job"):
// alone it prints its help; an unknown subcommand is a usage error.
func noun(use, short string, subs ...*cobra.Command) *cobra.Command {
	c := &cobra.Command{
		Use:   use,
		Short: short,
		Args:  subcommandArgs,
		RunE:  func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
	}
	c.AddCommand(subs...)
	return c
}

// subcommandArgs refuses arguments of a command that only has
// subcommands: they are a misspelt subcommand.
func subcommandArgs(cmd *cobra.Command, args []string) error {
	if len(args) == 0 {
		return nil
	}
	msg := fmt.Sprintf("unknown command %q for %q", args[0], cmd.CommandPath())
	if s := cmd.SuggestionsFor(args[0]); len(s) > 0 {
		msg += fmt.Sprintf(" (did you mean %q?)", s[0])
	}
	return usagef("%s; %q lists the commands", msg, cmd.CommandPath()+" --help")
}

// exactArgs wants n arguments, described by what ("a job id").
func exactArgs(n int, what string) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if len(args) != n {
			return usagef("%s: want %s (%s --help)", cmd.CommandPath(), what, cmd.CommandPath())
		}
		return nil
	}
}
