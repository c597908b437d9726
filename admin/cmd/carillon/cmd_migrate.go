package main

import (
	"fmt"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/carillonhq/carillon/admin/internal/store"
)

// migrateCmd is "carillon migrate": on the admin's host, with the admin
// stopped, it copies a SQLite database into a new PostgreSQL database that
// several admins can then share (store.Copy).
func migrateCmd(e *cmdEnv) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "migrate --from FILE.db --to postgres://...",
		Short: "On the admin's host, with the admin stopped: copy its SQLite database into a new PostgreSQL one",
		Long: `Copy a SQLite database into an empty PostgreSQL database that several admins
can then share. The PostgreSQL database is migrated to the current schema, then
groups, users and their group grants, API tokens, jobs, settings (the executor
token among them) and the audit log are copied in one transaction, every id
kept; each id sequence continues past the largest id the SQLite file gave out.
--runs copies the runs too, with the dashboard's counts and the database's
identity. Sessions and executor registrations are not copied: users log in
again, executors register again. It prints the rows copied per table.

A PostgreSQL database that holds any Carillon data is refused, and so is a
SQLite file that an admin still serves.`,
		Example: "  carillon migrate --from carillon.db --to 'postgres://carillon@db:5432/carillon?sslmode=verify-full' --runs",
		Args:    exactArgs(0, "no arguments"),
	}
	cmd.SetUsageTemplate(strings.Replace(cmd.UsageTemplate(), "{{if .HasAvailableInheritedFlags}}", "{{if false}}", 1))
	from := cmd.Flags().String("from", "", "the SQLite database file to copy (the admin serving it must be stopped)")
	to := cmd.Flags().String("to", "", "the postgres:// URL of an empty PostgreSQL database; it is migrated to the current schema")
	runs := cmd.Flags().Bool("runs", false, "copy the runs too (their history, counts and the database's identity)")
	_ = cmd.MarkFlagFilename("from", "db")
	cmd.RunE = func(cmd *cobra.Command, _ []string) error {
		if *from == "" || *to == "" {
			return usagef("migrate: want --from FILE.db --to postgres://... (carillon migrate --help)")
		}
		e.ran = true
		counts, err := store.Copy(cmd.Context(), e.proc.path(*from), *to, store.CopyOptions{Runs: *runs})
		if err != nil {
			return err
		}
		fmt.Fprintf(e.io.err, "carillon: copied %s into %s in one transaction:\n", *from, store.Redact(*to))
		w := tabwriter.NewWriter(e.io.out, 0, 4, 2, ' ', 0)
		fmt.Fprintln(w, "TABLE\tROWS")
		for _, c := range counts {
			fmt.Fprintf(w, "%s\t%d\n", c.Table, c.Rows)
		}
		if err := w.Flush(); err != nil {
			return err
		}
		if !*runs {
			fmt.Fprintln(e.io.err, "carillon: runs were not copied (--runs copies them)")
		}
		fmt.Fprintln(e.io.err, "carillon: sessions and executor registrations are not copied: users log in again, executors register again")
		return nil
	}
	return cmd
}
