package store

import "testing"

// TestPGText pins each rewrite pgText makes of the store's SQLite text, the
// forms the store uses: one case a rule, and texts that must pass through.
func TestPGText(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ name, in, want string }{
		{"no placeholders", `SELECT 1`, `SELECT 1`},
		{"bare placeholders are numbered",
			`UPDATE runs SET status = ? WHERE id = ? AND job_id = ?`,
			`UPDATE runs SET status = $1 WHERE id = $2 AND job_id = $3`},
		{"numbered placeholders keep their numbers",
			`SELECT id FROM admins WHERE adopted_by = ?1 OR id = ?1 LIMIT ?2`,
			`SELECT id FROM admins WHERE adopted_by = $1 OR id = $1 LIMIT $2`},
		{"a bare placeholder after numbered ones takes the next number, as SQLite counts",
			`SELECT ?2, ?`, `SELECT $2, $3`},
		{"placeholders in quoted text are left alone",
			`SELECT '?' || "a?b", ?`, `SELECT '?' || "a?b", $1`},
		{"COLLATE NOCASE becomes lower() on both sides",
			`SELECT id FROM users WHERE username = ? COLLATE NOCASE`,
			`SELECT id FROM users WHERE lower(username) = lower($1)`},
		{"json_each of an ID list",
			`SELECT id FROM jobs WHERE id IN (SELECT value FROM json_each(?1))`,
			`SELECT id FROM jobs WHERE id IN (SELECT value::bigint FROM jsonb_array_elements_text($1::jsonb) AS value)`},
		{"json_each with a bare placeholder",
			`DELETE FROM runs WHERE id IN (SELECT value FROM json_each(?))`,
			`DELETE FROM runs WHERE id IN (SELECT value::bigint FROM jsonb_array_elements_text($1::jsonb) AS value)`},
		{"INSERT OR IGNORE becomes ON CONFLICT DO NOTHING",
			"\n\tINSERT OR IGNORE INTO settings (name, value) VALUES (?, ?)",
			"\n\tINSERT INTO settings (name, value) VALUES ($1, $2) ON CONFLICT DO NOTHING"},
		{"NOT INDEXED is dropped",
			`SELECT count(*) FROM runs NOT INDEXED WHERE status = ?`,
			`SELECT count(*) FROM runs WHERE status = $1`},
		{"LIKE is case-insensitive",
			`SELECT id FROM jobs WHERE description LIKE ? ESCAPE '\'`,
			`SELECT id FROM jobs WHERE description ILIKE $1 ESCAPE '\'`},
		{"words that hold LIKE are left alone", `SELECT likes, ILIKE_ish FROM t`, `SELECT likes, ILIKE_ish FROM t`},
	} {
		if got := pgText(c.in); got != c.want {
			t.Errorf("%s:\npgText(%q)\n got %q\nwant %q", c.name, c.in, got, c.want)
		}
		if got := pgText(c.in); got != c.want { // remembered
			t.Errorf("%s, second time: got %q", c.name, got)
		}
	}
}
