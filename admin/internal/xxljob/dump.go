package xxljob

import (
	"errors"
	"fmt"
	"strings"
	"unicode"
)

// value is one SQL value of an INSERT: a string, a number (as written), or
// NULL.
type value struct {
	text string
	null bool
}

// row is one row of a table, by column name.
type row map[string]value

// str returns column c as text ("" for NULL or absent).
func (r row) str(c string) string { return r[c].text }

// has says the row has column c.
func (r row) has(c string) bool {
	_, ok := r[c]
	return ok
}

// table is the rows of one table of a dump, in the order of the dump.
type table struct {
	rows []row
}

// readDump reads the tables named in want from a mysqldump: their rows
// from INSERT statements, the column names from the INSERT's column list
// (mysqldump --complete-insert) or else the table's CREATE TABLE. Other
// statements and tables are skipped.
func readDump(src string, want ...string) (map[string]*table, error) {
	tables := map[string]*table{}
	columns := map[string][]string{}
	for _, w := range want {
		tables[w] = &table{}
	}
	stmts, err := statements(src)
	if err != nil {
		return nil, err
	}
	for _, s := range stmts {
		switch {
		case hasPrefixFold(s, "CREATE TABLE"):
			name, cols := createTable(s)
			if _, ok := tables[name]; ok {
				columns[name] = cols
			}
		case hasPrefixFold(s, "INSERT INTO") || hasPrefixFold(s, "INSERT IGNORE INTO") || hasPrefixFold(s, "REPLACE INTO"):
			if err := insert(s, tables, columns); err != nil {
				return nil, err
			}
		}
	}
	return tables, nil
}

func hasPrefixFold(s, prefix string) bool {
	return len(s) >= len(prefix) && strings.EqualFold(s[:len(prefix)], prefix)
}

// statements splits src into SQL statements, without comments, each
// trimmed and without its ';'.
func statements(src string) ([]string, error) {
	var out []string
	var cur strings.Builder
	for i := 0; i < len(src); i++ {
		c := src[i]
		switch {
		case c == '\'' || c == '"' || c == '`':
			end, err := quotedEnd(src, i)
			if err != nil {
				return nil, err
			}
			cur.WriteString(src[i : end+1])
			i = end
		case c == '-' && strings.HasPrefix(src[i:], "--") && (i+2 == len(src) || src[i+2] == ' ' || src[i+2] == '\t' || src[i+2] == '\n' || src[i+2] == '\r'):
			for i < len(src) && src[i] != '\n' {
				i++
			}
		case c == '#':
			for i < len(src) && src[i] != '\n' {
				i++
			}
		case c == '/' && strings.HasPrefix(src[i:], "/*"):
			end := strings.Index(src[i+2:], "*/")
			if end < 0 {
				return nil, errors.New("a /* comment is not closed")
			}
			i += end + 3
		case c == ';':
			if s := strings.TrimSpace(cur.String()); s != "" {
				out = append(out, s)
			}
			cur.Reset()
		default:
			cur.WriteByte(c)
		}
	}
	if s := strings.TrimSpace(cur.String()); s != "" {
		out = append(out, s)
	}
	return out, nil
}

// quotedEnd returns the index of the quote closing the quoted text that
// starts at src[start], with MySQL's escapes (backslash, doubled quote).
func quotedEnd(src string, start int) (int, error) {
	q := src[start]
	for i := start + 1; i < len(src); i++ {
		switch src[i] {
		case '\\':
			if q != '`' {
				i++
			}
		case q:
			if i+1 < len(src) && src[i+1] == q {
				i++
				continue
			}
			return i, nil
		}
	}
	return 0, fmt.Errorf("a %c quote opened at byte %d is not closed", q, start)
}

// createTable returns the table name and column names of a CREATE TABLE.
func createTable(s string) (string, []string) {
	open := strings.IndexByte(s, '(')
	if open < 0 {
		return "", nil
	}
	name := ident(strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(s[len("CREATE TABLE"):open]), "IF NOT EXISTS")))
	var cols []string
	for _, line := range splitTop(s[open+1 : strings.LastIndexByte(s, ')')]) {
		line = strings.TrimSpace(line)
		if !strings.HasPrefix(line, "`") {
			continue // a key or a constraint
		}
		end := strings.IndexByte(line[1:], '`')
		if end >= 0 {
			cols = append(cols, line[1:end+1])
		}
	}
	return name, cols
}

// ident strips the quotes of a possibly qualified identifier and returns its
// last part: `db`.`t` is t.
func ident(s string) string {
	if i := strings.LastIndex(s, "`.`"); i >= 0 {
		s = s[i+2:]
	} else if i := strings.LastIndexByte(s, '.'); i >= 0 && !strings.HasPrefix(s, "`") {
		s = s[i+1:]
	}
	return strings.Trim(s, "` ")
}

// splitTop splits s at the commas outside parentheses and quotes.
func splitTop(s string) []string {
	var parts []string
	depth, last := 0, 0
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case '\'', '"', '`':
			if end, err := quotedEnd(s, i); err == nil {
				i = end
			}
		case '(':
			depth++
		case ')':
			depth--
		case ',':
			if depth == 0 {
				parts = append(parts, s[last:i])
				last = i + 1
			}
		}
	}
	return append(parts, s[last:])
}

// insert adds the rows of an INSERT statement to its table, if wanted.
func insert(s string, tables map[string]*table, columns map[string][]string) error {
	into := strings.Index(strings.ToUpper(s), "INTO")
	rest := strings.TrimSpace(s[into+len("INTO"):])
	nameEnd := strings.IndexFunc(rest, func(r rune) bool { return r == '(' || unicode.IsSpace(r) })
	if nameEnd < 0 {
		return nil
	}
	name := ident(rest[:nameEnd])
	t, ok := tables[name]
	if !ok {
		return nil
	}
	rest = strings.TrimSpace(rest[nameEnd:])
	cols := columns[name]
	if strings.HasPrefix(rest, "(") {
		end := strings.IndexByte(rest, ')')
		if end < 0 {
			return fmt.Errorf("%s: the INSERT's column list is not closed", name)
		}
		cols = nil
		for _, c := range strings.Split(rest[1:end], ",") {
			cols = append(cols, ident(strings.TrimSpace(c)))
		}
		rest = strings.TrimSpace(rest[end+1:])
	}
	if !hasPrefixFold(rest, "VALUES") {
		return fmt.Errorf("%s: only INSERT ... VALUES is read", name)
	}
	if len(cols) == 0 {
		return fmt.Errorf("%s: the dump names no columns: dump with its CREATE TABLE (the default) or with --complete-insert", name)
	}
	tuples, err := tuples(strings.TrimSpace(rest[len("VALUES"):]))
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	for _, vals := range tuples {
		if len(vals) != len(cols) {
			return fmt.Errorf("%s: a row has %d values for %d columns", name, len(vals), len(cols))
		}
		r := make(row, len(cols))
		for i, c := range cols {
			r[c] = vals[i]
		}
		t.rows = append(t.rows, r)
	}
	return nil
}

// tuples parses "(v, ...), (v, ...)".
func tuples(s string) ([][]value, error) {
	var out [][]value
	i := 0
	skip := func() {
		for i < len(s) && (unicode.IsSpace(rune(s[i])) || s[i] == ',') {
			i++
		}
	}
	for skip(); i < len(s); skip() {
		if s[i] != '(' {
			return nil, fmt.Errorf("expected ( at %.20q", s[i:])
		}
		i++
		var vals []value
		for {
			for i < len(s) && unicode.IsSpace(rune(s[i])) {
				i++
			}
			if i >= len(s) {
				return nil, errors.New("a row is not closed")
			}
			v, n, err := sqlValue(s[i:])
			if err != nil {
				return nil, err
			}
			vals = append(vals, v)
			i += n
			for i < len(s) && unicode.IsSpace(rune(s[i])) {
				i++
			}
			if i < len(s) && s[i] == ',' {
				i++
				continue
			}
			if i < len(s) && s[i] == ')' {
				i++
				break
			}
			return nil, fmt.Errorf("expected , or ) at %.20q", s[i:])
		}
		out = append(out, vals)
	}
	return out, nil
}

// sqlValue parses the value at the start of s and returns it with its
// length.
func sqlValue(s string) (value, int, error) {
	if strings.HasPrefix(s, "_binary ") {
		v, n, err := sqlValue(s[len("_binary "):])
		return v, n + len("_binary "), err
	}
	if s[0] == '\'' || s[0] == '"' {
		end, err := quotedEnd(s, 0)
		if err != nil {
			return value{}, 0, err
		}
		return value{text: unescape(s[1:end], s[0])}, end + 1, nil
	}
	n := strings.IndexFunc(s, func(r rune) bool { return r == ',' || r == ')' || unicode.IsSpace(r) })
	if n < 0 {
		n = len(s)
	}
	word := s[:n]
	if strings.EqualFold(word, "NULL") {
		return value{null: true}, n, nil
	}
	return value{text: word}, n, nil
}

// unescape undoes MySQL's string escapes.
func unescape(s string, q byte) string {
	if !strings.ContainsAny(s, "\\"+string(q)) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == q && i+1 < len(s) && s[i+1] == q {
			b.WriteByte(q)
			i++
			continue
		}
		if c != '\\' || i+1 == len(s) {
			b.WriteByte(c)
			continue
		}
		i++
		switch s[i] {
		case 'n':
			b.WriteByte('\n')
		case 'r':
			b.WriteByte('\r')
		case 't':
			b.WriteByte('\t')
		case '0':
			b.WriteByte(0)
		case 'Z':
			b.WriteByte(26)
		case 'b':
			b.WriteByte('\b')
		default:
			b.WriteByte(s[i])
		}
	}
	return b.String()
}
