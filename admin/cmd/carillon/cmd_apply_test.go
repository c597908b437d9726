package main

import (
	"regexp"
	"strings"
	"testing"
)

// TestCLIApply drives apply and export against a real admin: a directory
// of YAML files is planned with --dry-run (nothing made), applied, applied
// again as an empty plan; a changed field is an update naming it; a key
// that is no field is refused naming the file, the item and the key;
// --prune deletes a job the files no longer list; and export, applied
// again, is an empty plan.
func TestCLIApply(t *testing.T) {
	t.Parallel()
	b, as := loggedIn(t)
	write := b.write
	write("jobs/base.yaml", `calendars:
  - name: weekend
    kind: CALENDAR_KIND_WEEKLY
    timeZone: UTC
    excludedWeekdays: [SAT, SUN]
groups:
  - appName: billing
    title: Billing
`)
	const jobsYAML = `jobs:
  - group: billing
    name: invoices
    description: Nightly invoices
    schedule: {type: SCHEDULE_TYPE_CRON, cron: "0 0 2 * * ?", timeZone: UTC}
    handler: invoices
    childJobs: [mails]
    calendars: [weekend]
    enabled: true
  - group: billing
    name: mails
    description: Send the invoices
    schedule: {type: SCHEDULE_TYPE_NONE}
    handler: mails
  - group: billing
    name: cleanup
    description: Cleanup
    schedule: {type: SCHEDULE_TYPE_NONE}
    handler: cleanup
`
	write("jobs/billing.yml", jobsYAML)
	write("jobs/workflows.yaml", `workflows:
  - group: billing
    name: month-end
    schedule: {type: SCHEDULE_TYPE_CRON, cron: "0 0 4 1 * ?", timeZone: UTC}
    nodes:
      - {key: bill, job: invoices}
      - {key: mail, job: mails, dependsOn: [bill], param: "--all"}
`)

	out := b.must("", as("apply", "-f", "jobs", "--dry-run")...)
	for _, want := range []string{`calendar\s+weekend\s+CREATE`, `group\s+billing\s+CREATE`, `job\s+billing/invoices\s+CREATE`,
		`workflow\s+billing/month-end\s+CREATE`, `Plan \(dry run, nothing changed\): 6 to create, 0 to update, 0 to delete, 0 unchanged\.\n$`} {
		if !regexp.MustCompile(want).MatchString(out) {
			t.Errorf("apply --dry-run: no %s in\n%s", want, out)
		}
	}
	if out := b.must("", as("group", "list")...); strings.Contains(out, "billing") {
		t.Errorf("group list after a dry run:\n%s", out)
	}
	if out := b.must("", as("apply", "-f", "jobs")...); !strings.HasSuffix(out, "Applied: 6 created, 0 updated, 0 deleted, 0 unchanged.\n") {
		t.Errorf("apply:\n%s", out)
	}
	if out := b.must("", as("apply", "-f", "jobs")...); !strings.HasSuffix(out, "Applied: 0 created, 0 updated, 0 deleted, 6 unchanged.\n") {
		t.Errorf("apply again:\n%s", out)
	}
	if out := b.must("", as("job", "list")...); !regexp.MustCompile(`\n\d+\s+\d+\s+invoices\s+Nightly invoices`).MatchString(out) {
		t.Errorf("job list shows no NAME:\n%s", out)
	}

	write("jobs/billing.yml", strings.Replace(jobsYAML, `"0 0 2 * * ?"`, `"0 30 2 * * ?"`, 1))
	if out := b.must("", as("apply", "-f", "jobs")...); !regexp.MustCompile(`job\s+billing/invoices\s+UPDATE\s+schedule.cron\n`).MatchString(out) {
		t.Errorf("apply of a changed cron:\n%s", out)
	}

	bad := write("bad.yaml", "jobs:\n  - group: billing\n    name: typo\n    descripton: x\n")
	b.fails(exitUsage, `bad.yaml: jobs[0]: unknown field "descripton"`, as("apply", "-f", bad)...)
	other := write("other.yaml", "pipelines: []\n")
	b.fails(exitUsage, `other.yaml: unknown key "pipelines": want groups, jobs, workflows or calendars`, as("apply", "-f", other)...)
	nodeless := write("nodeless.yaml", "workflows:\n  - group: billing\n    name: w\n    nodes: [{key: a}]\n")
	b.fails(exitUsage, `nodeless.yaml: workflows[0]: nodes[0].job: required`, as("apply", "-f", nodeless)...)
	byID := write("byid.yaml", "jobs:\n  - group: billing\n    name: x\n    description: x\n    handler: h\n    schedule: {type: SCHEDULE_TYPE_NONE}\n    childJobIds: [1]\n")
	b.fails(exitRefused, "jobs[0] (billing/x).child_job_ids: ids differ from admin to admin", as("apply", "-f", byID)...)

	// The files without cleanup: --prune deletes it.
	write("jobs/billing.yml", strings.Replace(jobsYAML[:strings.Index(jobsYAML, "  - group: billing\n    name: cleanup")], `"0 0 2 * * ?"`, `"0 30 2 * * ?"`, 1))
	if out := b.must("", as("apply", "-f", "jobs", "--prune")...); !regexp.MustCompile(`job\s+billing/cleanup\s+DELETE`).MatchString(out) ||
		!strings.HasSuffix(out, "Applied: 0 created, 0 updated, 1 deleted, 5 unchanged.\n") {
		t.Errorf("apply --prune:\n%s", out)
	}

	exported := b.must("", as("export")...)
	for _, want := range []string{"calendars:\n  - name: weekend\n", "groups:\n  - appName: billing\n", "jobs:\n  - group: billing\n    name: invoices\n",
		"    childJobs:\n      - mails\n", "cron: 0 30 2 * * ?\n",
		"workflows:\n  - group: billing\n    name: month-end\n", "      - key: mail\n        job: mails\n"} {
		if !strings.Contains(exported, want) {
			t.Errorf("export: no %q in\n%s", want, exported)
		}
	}
	if strings.Contains(exported, "createdAt") || strings.Contains(exported, "id:") {
		t.Errorf("export has output fields:\n%s", exported)
	}
	write("exported.yaml", exported)
	if out := b.must("", as("apply", "-f", "exported.yaml", "--prune")...); !strings.HasSuffix(out, "Applied: 0 created, 0 updated, 0 deleted, 5 unchanged.\n") {
		t.Errorf("apply of the export:\n%s\nexport:\n%s", out, exported)
	}
}
