package main

import (
	"context"
	"flag"
	"fmt"
	"text/tabwriter"

	"github.com/carillonhq/carillon/admin/internal/store"
)

// migrateCmd runs "carillon migrate": on the admin's host, with the admin
// stopped, it copies a SQLite database into a new PostgreSQL database that
// several admins can then share (store.Copy).
func migrateCmd(ctx context.Context, args []string, std stdio) error {
	fs := flag.NewFlagSet("carillon migrate", flag.ContinueOnError)
	fs.SetOutput(std.err)
	from := fs.String("from", "", "the SQLite database file to copy (the admin serving it must be stopped)")
	to := fs.String("to", "", "the postgres:// URL of an empty PostgreSQL database; it is migrated to the current schema")
	runs := fs.Bool("runs", false, "copy the runs too (their history, counts and the database's identity); without it the copy starts with no runs")
	if err := fs.Parse(args); err != nil {
		return usageError{err}
	}
	if fs.NArg() > 0 {
		return usagef("migrate: unexpected arguments %q", fs.Args())
	}
	if *from == "" || *to == "" {
		return usagef("migrate: want --from FILE.db --to postgres://...")
	}
	counts, err := store.Copy(ctx, *from, *to, store.CopyOptions{Runs: *runs})
	if err != nil {
		return err
	}
	fmt.Fprintf(std.err, "carillon: copied %s into %s in one transaction:\n", *from, store.Redact(*to))
	w := tabwriter.NewWriter(std.out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "TABLE\tROWS")
	for _, c := range counts {
		fmt.Fprintf(w, "%s\t%d\n", c.Table, c.Rows)
	}
	if err := w.Flush(); err != nil {
		return err
	}
	if !*runs {
		fmt.Fprintln(std.err, "carillon: runs were not copied (--runs copies them); sessions and executor registrations never are: users log in again, executors register again")
	} else {
		fmt.Fprintln(std.err, "carillon: sessions and executor registrations are not copied: users log in again, executors register again")
	}
	return nil
}
