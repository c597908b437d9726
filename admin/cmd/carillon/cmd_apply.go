package main

import (
	"context"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	carillonv1 "github.com/carillonhq/carillon/proto/carillon/v1"
)

// applyFileHelp says what `carillon apply` reads and `carillon export`
// writes.
const applyFileHelp = `The files are YAML (or JSON) with up to four top-level lists, whose keys
are the API's JSON field names (lowerCamelCase, enums by name); a key that
is not one of the message's fields is refused, naming the file and where:

  calendars:                       # by name
    - name: holidays
      kind: CALENDAR_KIND_HOLIDAY
      excludedDates: ["2026-12-24", "2026-12-25"]
  groups:                          # by appName
    - appName: billing
      title: Billing
  jobs:                            # by group and name
    - group: billing               # the appName of the job's group
      name: invoices               # letters, digits, '.', '_', '-'
      description: Nightly invoices
      schedule: {type: SCHEDULE_TYPE_CRON, cron: "0 0 2 * * ?", timeZone: Europe/Berlin}
      handler: invoices
      childJobs: [send-mails, other-app/audit]   # by name; "app/name" in another group
      calendars: [holidays]                      # by name
      enabled: true
  workflows:                       # by group and name
    - group: billing
      name: month-end
      schedule: {type: SCHEDULE_TYPE_CRON, cron: "0 0 4 1 * ?"}
      nodes:
        - {key: bill, job: invoices}             # each node's job by name
        - {key: mail, job: send-mails, dependsOn: [bill]}

Jobs and workflows name their group, child jobs, node jobs and calendars
instead of by id (groupId, childJobIds, calendarIds and a node's jobId are
refused), so one file applies to any admin. A definition says all of it: a
field left out is its zero value (a job without enabled: true is stopped).
Output fields (createdAt, nextFireAt, ...) are ignored.`

func applyCmd(e *cmdEnv) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "apply -f FILE|DIR [--dry-run] [--prune]",
		Short: "Make the admin's groups, jobs, workflows and calendars what YAML files say (jobs as code)",
		Long: "Make the admin's groups, jobs, workflows and calendars what YAML files say: apply prints the plan\n" +
			"(create, update with the fields that change, unchanged; delete with --prune) and makes\n" +
			"it in one transaction: a bad definition, or one you may not change (groups and calendars\n" +
			"are an ADMIN's, a group's jobs and workflows its MEMBERs'), refuses the whole plan and\n" +
			"changes nothing. --prune also deletes the jobs and workflows of the groups the files\n" +
			"list under groups: that the files do not list.\n" +
			"Applying the same files again changes nothing. -f DIR reads its .yaml, .yml and .json\n" +
			"files, sub-directories included, in name order.\n\n" + applyFileHelp,
		Example: "  carillon export > jobs/all.yaml\n  carillon apply -f jobs/ --dry-run\n  carillon apply -f jobs/ --prune",
		Args:    exactArgs(0, "flags only: carillon apply -f FILE|DIR"),
	}
	file := cmd.Flags().StringP("file", "f", "", "a YAML (or JSON) file, or a directory of them")
	dryRun := cmd.Flags().Bool("dry-run", false, "print the plan and change nothing")
	prune := cmd.Flags().Bool("prune", false, "also delete the jobs and workflows of the groups under groups: that the files do not list")
	_ = cobra.MarkFlagFilename(cmd.Flags(), "file", "yaml", "yml", "json")
	return e.leaf(cmd, func(ctx context.Context, _ []string) error {
		req, err := e.readApplyFiles(*file)
		if err != nil {
			return err
		}
		req.Prune, req.DryRun = *prune, *dryRun
		res, err := e.clients().Apply.Apply(ctx, req)
		if err != nil {
			return err
		}
		if e.json {
			return e.printJSON(res)
		}
		_, err = fmt.Fprint(e.io.out, planText(res))
		return err
	})
}

// planText is a plan as a table and a summary line.
func planText(res *carillonv1.ApplyResponse) string {
	rows := [][]string{{"KIND", "NAME", "ACTION", "FIELDS"}}
	counts := map[carillonv1.ApplyAction]int{}
	for _, c := range res.Changes {
		counts[c.Action]++
		rows = append(rows, []string{c.Kind, c.Name, enumName(c.Action, "APPLY_ACTION_"), orDash(strings.Join(c.Fields, ", "))})
	}
	summary := fmt.Sprintf("%d to create, %d to update, %d to delete, %d unchanged",
		counts[carillonv1.ApplyAction_APPLY_ACTION_CREATE], counts[carillonv1.ApplyAction_APPLY_ACTION_UPDATE],
		counts[carillonv1.ApplyAction_APPLY_ACTION_DELETE], counts[carillonv1.ApplyAction_APPLY_ACTION_UNCHANGED])
	if res.Applied {
		summary = "Applied: " + strings.NewReplacer(" to create", " created", " to update", " updated", " to delete", " deleted").Replace(summary)
	} else {
		summary = "Plan (dry run, nothing changed): " + summary
	}
	return table(rows) + summary + ".\n"
}

func exportCmd(e *cmdEnv) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "export [--group APP]",
		Short: "Write the admin's groups, jobs, workflows and calendars as YAML for carillon apply",
		Long: "Write the admin's groups, named jobs, workflows and calendars (those you may read) as YAML in\n" +
			"carillon apply's form: output fields and secrets left out, references by name. Applied\n" +
			"again it makes an empty plan. Jobs without a name are left out: give them one\n" +
			"(carillon job update ID --name NAME) to manage them as code.\n\n" + applyFileHelp,
		Example: "  carillon export > jobs/all.yaml\n  carillon export --group billing > jobs/billing.yaml",
		Args:    exactArgs(0, "flags only: carillon export [--group APP]"),
	}
	group := cmd.Flags().String("group", "", "only this group (app name), its jobs and workflows and the calendars they use")
	return e.leaf(cmd, func(ctx context.Context, _ []string) error {
		res, err := e.clients().Apply.Export(ctx, &carillonv1.ExportRequest{Group: *group})
		if err != nil {
			return err
		}
		if e.json {
			return e.printJSON(res)
		}
		out, err := exportYAML(res)
		if err != nil {
			return err
		}
		_, err = e.io.out.Write(out)
		return err
	})
}
