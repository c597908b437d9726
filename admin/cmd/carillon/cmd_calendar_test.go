package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestCLICalendar drives the calendar commands against a real admin: a
// YAML file creates a weekend calendar, list and get show it, a job's
// preview with --calendar skips the weekend, a calendar a job uses cannot
// be deleted, a bad file is refused naming the field.
func TestCLICalendar(t *testing.T) {
	t.Parallel()
	url := startAdmin(t)
	b := newCLI(t)
	cfg := filepath.Join(b.home, "config.json")
	as := func(args ...string) []string { return append(args, "--config", cfg) }
	b.must(testPassword+"\n", as("login", "--server", url, "--user", "admin", "--password-stdin")...)
	b.must("", as("group", "create", "cli")...)
	write := func(name, body string) string {
		if err := os.WriteFile(filepath.Join(b.dir, name), []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		return name
	}

	weekend := write("weekend.yaml", "name: weekend\nkind: CALENDAR_KIND_WEEKLY\ntime_zone: UTC\nexcluded_weekdays: [sat, sun]\n")
	out := b.must("", as("calendar", "create", "-f", weekend)...)
	for _, want := range []string{`ID:\s+1\n`, `Name:\s+weekend\n`, `Kind:\s+WEEKLY\n`, `Excludes:\s+SAT, SUN\n`} {
		if !regexp.MustCompile(want).MatchString(out) {
			t.Errorf("calendar create: no %s in\n%s", want, out)
		}
	}
	if out := b.must("", as("calendar", "list")...); !regexp.MustCompile(`\n1\s+weekend\s+WEEKLY\s+UTC\s+SAT, SUN`).MatchString(out) {
		t.Errorf("calendar list:\n%s", out)
	}
	bad := write("bad.yaml", "name: bad\nkind: CALENDAR_KIND_HOLIDAY\nexcluded_dates: [2026-02-30]\n")
	b.fails(exitRefused, `invalid_argument: calendar.excluded_dates[0]: must be a date "YYYY-MM-DD", got "2026-02-30"`, as("calendar", "create", "-f", bad)...)

	out = b.must("", as("job", "preview", "--cron", "0 0 12 * * ?", "--tz", "UTC", "--calendar", "1", "--count", "6", "--from", "2026-11-26T00:00:00Z")...)
	want := "FIRE TIME (UTC)\n2026-11-26T12:00:00Z\n2026-11-27T12:00:00Z\n2026-11-30T12:00:00Z\n2026-12-01T12:00:00Z\n2026-12-02T12:00:00Z\n2026-12-03T12:00:00Z\n"
	if out != want {
		t.Errorf("job preview with the weekend calendar:\n%s\nwant\n%s", out, want)
	}

	out = b.must("", as("job", "create", "--group", "1", "--description", "noon", "--handler", "h", "--cron", "0 0 12 * * ?", "--calendar", "1")...)
	if !regexp.MustCompile(`Calendars:\s+1\n`).MatchString(out) {
		t.Errorf("job create --calendar 1:\n%s", out)
	}
	b.fails(exitRefused, `failed_precondition: calendar 1 is used by 1 job(s): job 1 ("noon")`, as("calendar", "delete", "1")...)

	// The update replaces the whole calendar.
	write("weekend.yaml", "name: weekend\nkind: CALENDAR_KIND_WEEKLY\ntime_zone: UTC\nexcluded_weekdays: [SUN]\n")
	if out := b.must("", as("calendar", "update", "1", "-f", weekend)...); !strings.Contains(out, "SUN") || strings.Contains(out, "SAT") {
		t.Errorf("calendar update:\n%s", out)
	}
	b.must("", as("job", "update", "1", "--calendar", "")...)
	b.must("", as("calendar", "delete", "1")...)
	b.fails(exitNotFound, "calendar 1 not found", as("calendar", "get", "1")...)
}
