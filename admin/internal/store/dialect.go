package store

import (
	"regexp"
	"strconv"
	"strings"
	"sync"
)

// The store's SQL is written once, in SQLite's dialect. On PostgreSQL each
// statement's text is translated once (and remembered) by pgText, which
// knows the few SQLite forms the store uses; the statements whose meaning
// differs (the hot statements, the locking ones) have their own
// PostgreSQL text instead (stmts_postgres.go).

var (
	nocaseEq   = regexp.MustCompile(`(\w+) = \? COLLATE NOCASE`)
	idsJSON    = regexp.MustCompile(`SELECT value FROM json_each\(\?(\d*)\)`)
	orIgnore   = regexp.MustCompile(`^(\s*)INSERT OR IGNORE INTO`)
	notIndexed = regexp.MustCompile(`\s+NOT INDEXED\b`)
	like       = regexp.MustCompile(`\bLIKE\b`)

	pgTexts sync.Map // SQLite text → PostgreSQL text
)

// pgText translates a statement of the store from SQLite's dialect to
// PostgreSQL's: numbered placeholders ($1), case-insensitive LIKE and
// COLLATE NOCASE, JSON id lists, INSERT OR IGNORE.
func pgText(q string) string {
	if t, ok := pgTexts.Load(q); ok {
		return t.(string)
	}
	t := nocaseEq.ReplaceAllString(q, `lower($1) = lower(?)`)
	t = idsJSON.ReplaceAllString(t, `SELECT value::bigint FROM jsonb_array_elements_text(?$1::jsonb) AS value`)
	if orIgnore.MatchString(t) {
		t = orIgnore.ReplaceAllString(t, `${1}INSERT INTO`) + ` ON CONFLICT DO NOTHING`
	}
	t = notIndexed.ReplaceAllString(t, "")
	t = like.ReplaceAllString(t, "ILIKE")
	t = placeholders(t)
	pgTexts.Store(q, t)
	return t
}

// placeholders numbers SQLite's placeholders the PostgreSQL way: ?N
// becomes $N, and each bare ? the next number after the largest so far,
// as SQLite counts them. Quoted text is left alone.
func placeholders(q string) string {
	if !strings.Contains(q, "?") {
		return q
	}
	var b strings.Builder
	b.Grow(len(q) + 8)
	n := 0
	var quote byte
	for i := 0; i < len(q); i++ {
		c := q[i]
		switch {
		case quote != 0:
			if c == quote {
				quote = 0
			}
			b.WriteByte(c)
		case c == '\'' || c == '"':
			quote = c
			b.WriteByte(c)
		case c == '?':
			j := i + 1
			for j < len(q) && q[j] >= '0' && q[j] <= '9' {
				j++
			}
			if j > i+1 {
				k, _ := strconv.Atoi(q[i+1 : j])
				n = max(n, k)
				b.WriteString("$" + q[i+1:j])
				i = j - 1
			} else {
				n++
				b.WriteString("$" + strconv.Itoa(n))
			}
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}
