package main

import (
	"bufio"
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/carillonhq/carillon/admin"
)

// resetAdminPasswordCmd is "carillon reset-admin-password": on the host,
// with the admin stopped, the way back in when no ADMIN can log in.
func resetAdminPasswordCmd(e *cmdEnv) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "reset-admin-password",
		Short: "On the admin's host, with the admin stopped: a new password for an ADMIN",
		Long: `Make a user (created if missing) an enabled ADMIN with a new password, given on
stdin or generated and printed once; its sessions and API tokens end, and the
audit log records it. Run it on the admin's host, with the admin stopped: it
refuses to run while an admin serves the database.`,
		Example: "  carillon reset-admin-password --db carillon.db\n  printf '%s\\n' \"$NEW\" | carillon reset-admin-password --password-stdin",
		Args:    exactArgs(0, "no arguments"),
	}
	cmd.SetUsageTemplate(strings.Replace(cmd.UsageTemplate(), "{{if .HasAvailableInheritedFlags}}", "{{if false}}", 1))
	db := cmd.Flags().String("db", admin.DBPathDefault, "the admin's SQLite database file (env CARILLON_DB)")
	user := cmd.Flags().String("user", admin.FirstAdminUsername, "the user to make an enabled ADMIN with a new password; created if missing")
	stdin := cmd.Flags().Bool("password-stdin", false, "read the new password from the first line of stdin; otherwise one is generated and printed")
	cmd.RunE = func(cmd *cobra.Command, _ []string) error {
		e.ran = true
		if v := e.proc.getenv("CARILLON_DB"); v != "" && !cmd.Flags().Changed("db") {
			*db = v
		}
		var password string
		if *stdin {
			line, err := bufio.NewReader(e.io.in).ReadString('\n')
			if err != nil && line == "" {
				return usageError{errors.New("--password-stdin: want the password on the first line of stdin")}
			}
			password = strings.TrimRight(line, "\r\n")
		}
		set, err := admin.ResetAdminPassword(cmd.Context(), e.proc.path(*db), *user, password, 0)
		if err != nil {
			return err
		}
		if *stdin {
			fmt.Fprintf(e.io.err, "carillon: %s is an enabled ADMIN with the password you gave; its sessions and API tokens were ended\n", *user)
			return nil
		}
		fmt.Fprintf(e.io.err, "carillon: %s is an enabled ADMIN with this password, shown only this once (its sessions and API tokens were ended):\n\n    %s\n\n"+
			"  Log in with:  carillon login --user %s\n  then change it with:  carillon user passwd\n", *user, set, *user)
		return nil
	}
	return cmd
}
