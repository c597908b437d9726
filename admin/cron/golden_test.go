package cron

import (
	"bufio"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// The golden files hold fire times computed by real Quartz 2.3.2. To add
// cases, edit testdata/*.cases (or the generator) and regenerate:
//
//go:generate go run ./testdata/quartzgen -quartz ../../../shared/tools/quartz-golden/run

// goldenCase is one line of a testdata/*.golden file:
// "id|expression|zone|start|count|result", where result is Quartz's
// comma-separated fire times, ending in NONE when there are no more, or
// "ERROR: ..." when Quartz rejects the expression.
type goldenCase struct {
	file, id, expr, zone, start string
	count                       int
	result                      string
}

func readGolden(t *testing.T, name string) []goldenCase {
	t.Helper()
	f, err := os.Open(name)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var cases []goldenCase
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for line := 1; sc.Scan(); line++ {
		text := sc.Text()
		if text == "" || strings.HasPrefix(text, "#") {
			continue
		}
		p := strings.SplitN(text, "|", 6)
		if len(p) != 6 {
			t.Fatalf("%s:%d: want 6 fields, got %d", name, line, len(p))
		}
		n, err := strconv.Atoi(p[4])
		if err != nil {
			t.Fatalf("%s:%d: count: %v", name, line, err)
		}
		cases = append(cases, goldenCase{filepath.Base(name), p[0], p[1], p[2], p[3], n, p[5]})
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return cases
}

// parseJavaTime parses java.time.OffsetDateTime.toString output, which
// leaves out zero seconds ("2026-11-22T08:10-05:00").
func parseJavaTime(s string) (time.Time, error) {
	if t, err := time.Parse("2006-01-02T15:04Z07:00", s); err == nil {
		return t, nil
	}
	return time.Parse(time.RFC3339Nano, s)
}

// TestGolden compares Next with Quartz on every case of the golden files
// except strict.golden: the same fire times (instant and UTC offset), the
// same end (NONE), and rejection of the same expressions.
func TestGolden(t *testing.T) {
	files, err := filepath.Glob("testdata/*.golden")
	if err != nil {
		t.Fatal(err)
	}
	total := 0
	zones := map[string]bool{}
	for _, file := range files {
		if filepath.Base(file) == "strict.golden" {
			continue
		}
		for _, c := range readGolden(t, file) {
			total++
			zones[c.zone] = true
			t.Run(c.file+"/"+c.id, func(t *testing.T) { checkGolden(t, c) })
		}
	}
	if total < 100 {
		t.Fatalf("only %d golden cases found", total)
	}
	t.Logf("%d golden cases in %d zones", total, len(zones))
}

func checkGolden(t *testing.T, c goldenCase) {
	t.Helper()
	loc, err := time.LoadLocation(c.zone)
	if err != nil {
		t.Fatal(err)
	}
	s, err := Parse(c.expr, loc)
	if strings.HasPrefix(c.result, "ERROR") {
		if err == nil {
			t.Fatalf("Parse(%q) succeeded; Quartz rejects it: %s", c.expr, c.result)
		}
		return
	}
	if err != nil {
		t.Fatalf("Parse(%q): %v; Quartz accepts it", c.expr, err)
	}
	at, err := parseJavaTime(c.start)
	if err != nil {
		t.Fatal(err)
	}
	for i, want := range strings.Split(c.result, ",") {
		got := s.Next(at)
		if want == "NONE" {
			if !got.IsZero() {
				t.Fatalf("%q from %s: fire %d: got %s, Quartz has no more", c.expr, at.Format(time.RFC3339), i+1, got.Format(time.RFC3339))
			}
			return
		}
		w, err := parseJavaTime(want)
		if err != nil {
			t.Fatal(err)
		}
		_, wantOff := w.Zone()
		_, gotOff := got.Zone()
		if !got.Equal(w) || gotOff != wantOff {
			t.Fatalf("%q in %s from %s: fire %d: got %s, Quartz %s (all: %s)", c.expr, c.zone, at.Format(time.RFC3339), i+1,
				got.Format(time.RFC3339), w.Format(time.RFC3339), c.result)
		}
		at = got
	}
}

// TestStrict checks the expressions that Quartz accepts but Parse rejects
// on purpose (see the package documentation): each one must fail to parse.
// strict.golden records what Quartz does with them.
func TestStrict(t *testing.T) {
	cases := readGolden(t, "testdata/strict.golden")
	for _, c := range cases {
		t.Run(c.id, func(t *testing.T) {
			if _, err := Parse(c.expr, time.UTC); err == nil {
				t.Errorf("Parse(%q) succeeded; it should be rejected (Quartz: %s)", c.expr, c.result)
			}
		})
	}
}
