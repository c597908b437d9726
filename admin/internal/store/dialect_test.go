package store

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// TestDialectFragments pins each fragment of the two dialects.
func TestDialectFragments(t *testing.T) {
	t.Parallel()
	lite, pg := sqliteDialect{}, postgresDialect{}
	for _, c := range []struct{ name, got, want string }{
		{"sqlite equalFold", lite.equalFold("username", "$1"), `username = $1 COLLATE NOCASE`},
		{"postgres equalFold", pg.equalFold("username", "$1"), `lower(username) = lower($1)`},
		{"sqlite likeFold", lite.likeFold(), `LIKE`},
		{"postgres likeFold", pg.likeFold(), `ILIKE`},
		{"sqlite idRows", lite.idRows("$2"), `SELECT value FROM json_each($2)`},
		{"postgres idRows", pg.idRows("$2"), `SELECT value::bigint FROM jsonb_array_elements_text($2::jsonb) AS value`},
		{"sqlite notIndexed", lite.notIndexed(), ` NOT INDEXED`},
		{"postgres notIndexed", pg.notIndexed(), ``},
		{"sqlite forUpdate", lite.forUpdate(), ``},
		{"postgres forUpdate", pg.forUpdate(), ` FOR UPDATE`},
		{"sqlite skipLocked", lite.skipLocked(), ``},
		{"postgres skipLocked", pg.skipLocked(), ` FOR UPDATE SKIP LOCKED`},
		{"sqlite lockRows", lite.lockRows("groups", "$1"), ``},
		{"postgres lockRows", pg.lockRows("groups", "$1"), `SELECT id FROM groups WHERE id IN ($1) ORDER BY id FOR UPDATE`},
		{"sqlite migrations", lite.migrations(), `migrations`},
		{"postgres migrations", pg.migrations(), `migrations_postgres`},
		{"sqlite migrationStart", strings.Join(lite.migrationStart(), "; "),
			`CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY)`},
		{"postgres migrationStart", strings.Join(pg.migrationStart(), "; "),
			`SELECT pg_advisory_xact_lock(7318201901); CREATE TABLE IF NOT EXISTS schema_migrations (version BIGINT PRIMARY KEY)`},
	} {
		if c.got != c.want {
			t.Errorf("%s:\n got %q\nwant %q", c.name, c.got, c.want)
		}
	}
}

// TestHotStatements checks the hot statements of each dialect: each is
// set (one of the two settles), and numbers its placeholders from $1
// without a gap.
func TestHotStatements(t *testing.T) {
	t.Parallel()
	for name, d := range map[string]dialect{"sqlite": sqliteDialect{}, "postgres": postgresDialect{}} {
		h := d.hot()
		texts := map[string]string{
			"claimRuns": h.claimRuns, "recordRuns": h.recordRuns, "recordSent": h.recordSent, "routeRuns": h.routeRuns,
			"shardTotals": h.shardTotals, "advanceJobs": h.advanceJobs, "jobsByID": h.jobsByID, "resultRuns": h.resultRuns,
			"laterNote": h.laterNote, "fixDelayNext": h.fixDelayNext,
		}
		if (h.insertRunList == "") == (h.insertRuns == nil) {
			t.Errorf("%s: insertRunList %q and insertRuns set %v: want one of the two", name, h.insertRunList, h.insertRuns != nil)
		}
		if h.insertRunList != "" {
			texts["insertRunList"] = h.insertRunList
		}
		if (h.settleRuns == "") == (h.settleChunk == nil) {
			t.Errorf("%s: settleRuns %q and settleChunk set %v: want one of the two", name, h.settleRuns, h.settleChunk != nil)
		}
		if h.settleRuns != "" {
			texts["settleRuns"] = h.settleRuns
		}
		for what, q := range texts {
			if q == "" {
				t.Errorf("%s: %s: no text", name, what)
				continue
			}
			t.Run(name+" "+what, func(t *testing.T) { placeholderCount(t, q) })
		}
		// The multi-row statements: anonymous on SQLite (anonymousRows),
		// numbered on PostgreSQL, as many as their rows' values.
		anonymous := name == "sqlite"
		for _, n := range insertChunks {
			if h.settleChunk != nil {
				if got := valueCount(t, h.settleChunk(n), anonymous); got != n*settleValues {
					t.Errorf("%s: settleChunk(%d) takes %d values, want %d", name, n, got, n*settleValues)
				}
			}
			if h.insertRuns != nil {
				if got := valueCount(t, h.insertRuns(n), anonymous); got != n*runInsertArgs {
					t.Errorf("%s: insertRuns(%d) takes %d values, want %d", name, n, got, n*runInsertArgs)
				}
			}
			if h.insertPlain != nil {
				if got := valueCount(t, h.insertPlain(n), anonymous); got != n*plainInsertArgs {
					t.Errorf("%s: insertPlain(%d) takes %d values, want %d", name, n, got, n*plainInsertArgs)
				}
			}
		}
	}
}

// valueCount returns how many values q takes: its anonymous ? placeholders
// (and no numbered one) when anonymous, else placeholderCount's.
func valueCount(t *testing.T, q string, anonymous bool) int {
	t.Helper()
	if !anonymous {
		return placeholderCount(t, q)
	}
	n, quote := 0, false
	for _, c := range q {
		switch {
		case c == '\'':
			quote = !quote
		case quote:
		case c == '?':
			n++
		case c == '$':
			t.Errorf("a $ in %s: want anonymous placeholders only", q)
		}
	}
	return n
}

// placeholderCount returns how many arguments q takes: the largest $N of
// its placeholders, which must number every argument from $1 on. A ?
// placeholder fails the test: the store numbers its own.
func placeholderCount(t *testing.T, q string) int {
	t.Helper()
	seen := map[int]bool{}
	var quote bool
	for i := 0; i < len(q); i++ {
		switch c := q[i]; {
		case c == '\'':
			quote = !quote
		case quote:
		case c == '?':
			t.Errorf("a ? placeholder at %d in %s", i, q)
		case c == '$':
			j := i + 1
			for j < len(q) && q[j] >= '0' && q[j] <= '9' {
				j++
			}
			n, err := strconv.Atoi(q[i+1 : j])
			if err != nil {
				t.Errorf("a $ that is no placeholder at %d in %s", i, q)
				continue
			}
			seen[n] = true
			i = j - 1
		}
	}
	for n := 1; n <= len(seen); n++ {
		if !seen[n] {
			t.Errorf("no $%d among the %d placeholders of %s", n, len(seen), q)
		}
	}
	return len(seen)
}

// sqlPlaceholder is a ? where SQL takes a value: after an operator, a
// parenthesis, a comma, a space or nothing, and before a number (?NNN), a
// space, a parenthesis, a comma or nothing.
var sqlPlaceholder = regexp.MustCompile(`(^|[\s(,=<>+*/-])\?(\d+|[\s),]|$)`)

// TestNoQuestionMarkPlaceholders fails on any ? placeholder left in the
// store's SQL: its statements number their placeholders ($1), which both
// databases bind by number, or build them with args. It reads every string
// literal of the package's code, so that a statement built at run time is
// checked too, whichever tests run it.
func TestNoQuestionMarkPlaceholders(t *testing.T) {
	t.Parallel()
	names, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	checked := 0
	for _, name := range names {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		src, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		f, err := parser.ParseFile(fset, name, src, 0)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(f, func(n ast.Node) bool {
			lit, ok := n.(*ast.BasicLit)
			if !ok || lit.Kind != token.STRING {
				return true
			}
			s, err := strconv.Unquote(lit.Value)
			// "?" alone begins the query of SQLite's file: URL (openDB).
			if err != nil || s == "?" {
				return true
			}
			checked++
			if sqlPlaceholder.MatchString(s) {
				t.Errorf("%s: a ? placeholder in %s", fset.Position(lit.Pos()), s)
			}
			return true
		})
	}
	if checked < 100 {
		t.Errorf("checked %d string literals: the package's code was not read", checked)
	}
}

// TestSQLPlaceholderPattern pins what TestNoQuestionMarkPlaceholders
// takes for a ? placeholder.
func TestSQLPlaceholderPattern(t *testing.T) {
	t.Parallel()
	var got []string
	for _, s := range []string{
		"id = ?", "id = ?1", "IN (?, ?)", "(?", ", ?", "LIMIT ?", "x || ? || y", // placeholders
		"file:a?mode=ro", "who?", "'is it?'", "$1", "* * * ?x", // not
	} {
		if sqlPlaceholder.MatchString(s) {
			got = append(got, s)
		}
	}
	want := []string{"id = ?", "id = ?1", "IN (?, ?)", "(?", ", ?", "LIMIT ?", "x || ? || y"}
	if !slices.Equal(got, want) {
		t.Errorf("matched %q, want %q", got, want)
	}
}
