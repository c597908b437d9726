package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"regexp"
	"strings"
	"time"

	"connectrpc.com/connect"
	"github.com/spf13/cobra"
	"google.golang.org/protobuf/proto"

	"github.com/carillonhq/carillon/admin/internal/xxljob"
	carillonv1 "github.com/carillonhq/carillon/proto/carillon/v1"
	"github.com/carillonhq/carillon/proto/carillon/v1/carillonv1connect"
)

func importCmd(e *cmdEnv) *cobra.Command {
	return noun("import", "Import jobs from another scheduler (ADMIN)", importXXLJobCmd(e))
}

// importXXLJobCmd is "carillon import xxl-job FILE": the groups and jobs
// of an xxl-job MySQL dump, created in one transaction (ADMIN).
func importXXLJobCmd(e *cmdEnv) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "xxl-job FILE",
		Short: "Create an xxl-job database's groups and jobs, from a mysqldump, in one transaction",
		Long: `Read a mysqldump of an xxl-job database (xxl-job 2.1 to 3.5: the INSERTs of
xxl_job_group and xxl_job_info, with their CREATE TABLE statements or
--complete-insert column lists) and create its groups, as groups of xxl-job
executors, and its jobs, with child job ids remapped. Every row is checked
first: a bad row is named with its table and id, and nothing is imported.

The jobs are created stopped, those running in xxl-job too, unless --start
is given: xxl-job's admin usually still fires them until the cut-over, and
both would run them. The command prints the "carillon job start" line to
run once the executors point at Carillon and xxl-job's triggers are
stopped, and warns about what will not work yet (script jobs of groups
without --allow-scripts, alarm e-mails, MANUAL groups' addresses).`,
		Example: "  mysqldump xxl_job xxl_job_group xxl_job_info > xxl-job.sql\n" +
			"  carillon import xxl-job --dry-run --time-zone Asia/Shanghai xxl-job.sql\n" +
			"  carillon import xxl-job --time-zone Asia/Shanghai xxl-job.sql",
		Args: exactArgs(1, "a mysqldump file: carillon import xxl-job FILE"),
	}
	fs := cmd.Flags()
	dryRun := fs.Bool("dry-run", false, "check everything and print what would be created; create nothing")
	allowScripts := fs.Bool("allow-scripts", false, "send the groups' GLUE script jobs to their executors (Group.allow_scripts)")
	zone := fs.String("time-zone", "", "IANA zone of the cron schedules: the zone xxl-job's admin ran in (default: the Carillon admin's)")
	dbZone := fs.String("db-time-zone", "", "IANA zone of the dump's DATETIME values: the JDBC connection's (default: this machine's)")
	start := fs.Bool("start", false, "start the jobs that run in xxl-job at once (default: create every job stopped, to start after the cut-over)")
	return e.leaf(cmd, func(ctx context.Context, args []string) error {
		opts := xxljob.ImportOptions{AllowScripts: *allowScripts, TimeZone: *zone, DBLocation: time.Local}
		if *dbZone != "" {
			var err error
			if opts.DBLocation, err = time.LoadLocation(*dbZone); err != nil {
				return usagef("--db-time-zone: %v", err)
			}
		}
		src, err := os.ReadFile(e.proc.path(args[0])) //nolint:gosec // the file the user named on the command line
		if err != nil {
			return fmt.Errorf("read the dump: %w", err)
		}
		req, res, err := importXXLJob(ctx, e.clients().Jobs, string(src), opts, *dryRun, *start)
		if err != nil {
			return err
		}
		for _, w := range importWarnings(req) {
			fmt.Fprintln(e.io.err, "carillon: warning:", w)
		}
		if e.json {
			return e.printJSON(res)
		}
		printImport(e, req, res, *dryRun)
		printCutOver(e, req, res, *dryRun, *start)
		return nil
	})
}

// importWarnings says what of an import will not work yet: script jobs
// in groups that do not allow scripts, alarm e-mails (sent only by an
// admin with SMTP), MANUAL groups' executors (called at once, with
// Carillon's token).
func importWarnings(req *carillonv1.ImportJobsRequest) []string {
	groups := map[int64]*carillonv1.Group{}
	for _, g := range req.Groups {
		groups[g.Id] = g
	}
	var scripts, emails []string
	for _, j := range req.Jobs {
		if g := groups[j.GroupId]; j.Script != nil && g != nil && !g.AllowScripts {
			scripts = append(scripts, fmtID(j.Id))
		}
		if len(j.AlarmEmails) > 0 {
			emails = append(emails, fmtID(j.Id))
		}
	}
	var w []string
	if len(scripts) > 0 {
		w = append(w, fmt.Sprintf("the GLUE script jobs %s (xxl-job ids) are in groups that do not allow scripts: "+
			"their runs fail \"not sent\" until the group allows them (--allow-scripts, or carillon group update ID --allow-scripts)",
			strings.Join(scripts, ", ")))
	}
	if len(emails) > 0 {
		w = append(w, fmt.Sprintf("the jobs %s (xxl-job ids) have alarm e-mails: the admin sends them only when it runs with "+
			"--smtp-addr and --smtp-from (CARILLON_SMTP_ADDR, CARILLON_SMTP_FROM)", strings.Join(emails, ", ")))
	}
	for _, g := range req.Groups {
		if g.AddressMode == carillonv1.AddressMode_ADDRESS_MODE_MANUAL {
			w = append(w, fmt.Sprintf("the MANUAL group %s (xxl-job id %d) calls the executors %s directly: their runs fail "+
				"until those executors use Carillon's executor token (carillon executor-token) and report to Carillon",
				g.AppName, g.Id, strings.Join(g.Addresses, ", ")))
		}
	}
	return w
}

// printCutOver says which jobs ran in xxl-job, and how to start them once
// the executors are Carillon's and xxl-job's triggers are stopped.
func printCutOver(e *cmdEnv, req *carillonv1.ImportJobsRequest, res *carillonv1.ImportJobsResponse, dryRun, started bool) {
	var running []string
	for _, src := range req.Jobs {
		if src.Enabled {
			id := fmtID(src.Id)
			if !dryRun {
				id = newID(res.JobIds, src.Id)
			}
			running = append(running, id)
		}
	}
	switch {
	case len(running) == 0:
	case started:
		fmt.Fprintf(e.io.out, "\n%d jobs that run in xxl-job were started (--start): stop xxl-job's triggers of them, or both admins fire them\n",
			len(running))
	case dryRun:
		fmt.Fprintf(e.io.out, "\n%d jobs run in xxl-job (xxl-job ids %s): they would be created stopped; the import prints the "+
			"carillon job start line to run after the cut-over\n", len(running), strings.Join(running, " "))
	default:
		fmt.Fprintf(e.io.out, "\n%d jobs that run in xxl-job were created stopped, so that they do not fire twice. After the cut-over\n"+
			"(executors pointed at Carillon, xxl-job's triggers of these jobs stopped), start them:\n\n"+
			"    carillon job start %s\n", len(running), strings.Join(running, " "))
	}
}

// importXXLJob converts an xxl-job dump and sends it to ImportJobs. An
// error names the dump's row (table and id) and says nothing was imported.
//
// The request's jobs keep Enabled as they were in xxl-job (what ran
// there); unless start, the jobs sent are all stopped.
func importXXLJob(ctx context.Context, jobs carillonv1connect.JobServiceClient, dump string, opts xxljob.ImportOptions,
	dryRun, start bool) (*carillonv1.ImportJobsRequest, *carillonv1.ImportJobsResponse, error) {
	req, err := xxljob.Import(dump, opts)
	var re *xxljob.RowError
	if errors.As(err, &re) {
		return nil, nil, connect.NewError(connect.CodeInvalidArgument, fmt.Errorf("%w; nothing imported", err))
	}
	if err != nil {
		return nil, nil, connect.NewError(connect.CodeInvalidArgument, fmt.Errorf("%w; nothing imported", err))
	}
	req.DryRun = dryRun
	send := req
	if !start {
		send = proto.CloneOf(req)
		for _, j := range send.Jobs {
			j.Enabled = false
		}
	}
	res, err := jobs.ImportJobs(ctx, send)
	if err != nil {
		return nil, nil, sourceError(err)
	}
	return req, res, nil
}

// requestField matches the field an ImportJobs error names, e.g.
// "jobs[3] (source id 12).schedule.cron".
var requestField = regexp.MustCompile(`^(groups|jobs)(\[\d+\])? \(source id (\d+)\)\.?`)

// sourceError rewrites an ImportJobs error to name the dump's row:
// "jobs[3] (source id 12).schedule.cron: ..." becomes "xxl_job_info id 12:
// schedule.cron: ...; nothing imported".
func sourceError(err error) error {
	var ce *connect.Error
	if !errors.As(err, &ce) {
		return err
	}
	msg := ce.Message()
	if m := requestField.FindStringSubmatch(msg); m != nil {
		table := xxljob.GroupTable
		if m[1] == "jobs" {
			table = xxljob.JobTable
		}
		rest := strings.TrimPrefix(msg[len(m[0]):], ": ")
		msg = fmt.Sprintf("%s id %s: %s", table, m[3], rest)
	}
	switch ce.Code() {
	case connect.CodeInvalidArgument, connect.CodeAlreadyExists, connect.CodeFailedPrecondition:
		msg += "; nothing imported"
	}
	return connect.NewError(ce.Code(), errors.New(msg))
}

// printImport prints the groups and jobs created (or, for a dry run, to
// be created), with their ids in the dump and in Carillon.
func printImport(e *cmdEnv, req *carillonv1.ImportJobsRequest, res *carillonv1.ImportJobsResponse, dryRun bool) {
	verb := "created"
	if dryRun {
		verb = "would create"
	}
	fmt.Fprintf(e.io.out, "%s %d groups and %d jobs\n", verb, len(res.Groups), len(res.Jobs))
	header := []string{"XXL-JOB ID", "ID", "APP", "TITLE", "MODE", "SCRIPTS"}
	var rows [][]string
	for i, g := range res.Groups {
		src := req.Groups[i].Id
		rows = append(rows, []string{fmtID(src), newID(res.GroupIds, src), g.AppName, g.Title,
			enumName(g.AddressMode, "ADDRESS_MODE_"), fmt.Sprint(g.AllowScripts)})
	}
	_ = e.print(res, header, rows)
	fmt.Fprintln(e.io.out)
	header = []string{"XXL-JOB ID", "ID", "GROUP", "DESCRIPTION", "SCHEDULE", "HANDLER", "ENABLED", "CHILDREN"}
	rows = nil
	for i, j := range res.Jobs {
		src := req.Jobs[i]
		what := j.Handler
		if j.Script != nil {
			what = enumName(j.Script.Type, "SCRIPT_TYPE_") + " script"
		}
		var children []string
		for _, c := range src.ChildJobIds {
			children = append(children, fmtID(c))
		}
		rows = append(rows, []string{fmtID(src.Id), newID(res.JobIds, src.Id), newID(res.GroupIds, src.GroupId), j.Description,
			scheduleText(j.Schedule), orDash(what), fmt.Sprint(j.Enabled), orDash(strings.Join(children, ","))})
	}
	_ = e.print(res, header, rows)
}

// newID returns the Carillon id of source id src, "-" in a dry run.
func newID(ids map[int64]int64, src int64) string {
	if id, ok := ids[src]; ok {
		return fmtID(id)
	}
	return "-"
}
