package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode"

	"golang.org/x/text/width"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/known/timestamppb"
)

// printJSON prints m as the API's JSON, indented by two spaces. protojson
// randomizes its whitespace from build to build, so its compact output is
// re-indented: the same message always prints the same bytes.
func (e *cmdEnv) printJSON(m proto.Message) error {
	b, err := protojson.Marshal(m)
	if err != nil {
		return fmt.Errorf("print JSON: %w", err)
	}
	var out bytes.Buffer
	if err := json.Indent(&out, b, "", "  "); err != nil {
		return fmt.Errorf("print JSON: %w", err)
	}
	out.WriteByte('\n')
	_, err = e.io.out.Write(out.Bytes())
	return err
}

// print prints m as JSON with --json, else as a table.
func (e *cmdEnv) print(m proto.Message, header []string, rows [][]string) error {
	if e.json {
		return e.printJSON(m)
	}
	_, err := fmt.Fprint(e.io.out, table(append([][]string{header}, rows...)))
	return err
}

// table lays rows out in columns two spaces apart, as text/tabwriter did,
// but by the width each cell takes on a terminal: a CJK character takes
// two columns (a Chinese title lines up with the rest), a combining mark
// none. The last cell of a row is not padded.
func table(rows [][]string) string {
	var widths []int
	for _, r := range rows {
		for i, c := range r[:max(len(r)-1, 0)] {
			if i == len(widths) {
				widths = append(widths, 0)
			}
			widths[i] = max(widths[i], displayWidth(c))
		}
	}
	var b strings.Builder
	for _, r := range rows {
		for i, c := range r {
			b.WriteString(c)
			if i < len(r)-1 {
				b.WriteString(strings.Repeat(" ", widths[i]-displayWidth(c)+2))
			}
		}
		b.WriteByte('\n')
	}
	return b.String()
}

// displayWidth is how many terminal columns s takes, its widest line's
// when it has several: 2 for an East Asian wide or fullwidth character, 0
// for a combining mark or a control character, 1 for the rest.
func displayWidth(s string) int {
	widest, n := 0, 0
	for _, r := range s {
		switch {
		case r == '\n':
			widest, n = max(widest, n), 0
		case unicode.Is(unicode.Mn, r), unicode.Is(unicode.Me, r), unicode.IsControl(r), r == '\u200b':
		default:
			switch width.LookupRune(r).Kind() {
			case width.EastAsianWide, width.EastAsianFullwidth:
				n += 2
			default:
				n++
			}
		}
	}
	return max(widest, n)
}

// printFields prints one message as "Name: value" lines (or JSON). A
// value of several lines is indented under its name.
func (e *cmdEnv) printFields(m proto.Message, fields [][2]string) error {
	if e.json {
		return e.printJSON(m)
	}
	width := 0
	for _, f := range fields {
		width = max(width, len(f[0]))
	}
	var b strings.Builder
	for _, f := range fields {
		v := strings.ReplaceAll(strings.TrimRight(f[1], "\n"), "\n", "\n"+strings.Repeat(" ", width+3))
		fmt.Fprintf(&b, "%-*s %s\n", width+2, f[0]+":", v)
	}
	_, err := fmt.Fprint(e.io.out, b.String())
	return err
}

// printDone prints m with --json, else the sentence.
func (e *cmdEnv) printDone(m proto.Message, format string, args ...any) error {
	if e.json {
		return e.printJSON(m)
	}
	_, err := fmt.Fprintf(e.io.out, format+"\n", args...)
	return err
}

func fmtTime(t *timestamppb.Timestamp) string {
	if t == nil {
		return "-"
	}
	return t.AsTime().Local().Format("2006-01-02 15:04:05")
}

func fmtID(id int64) string { return strconv.FormatInt(id, 10) }

func fmtIDs(ids []int64) string {
	if len(ids) == 0 {
		return "-"
	}
	parts := make([]string, len(ids))
	for i, id := range ids {
		parts[i] = fmtID(id)
	}
	return strings.Join(parts, ",")
}

func fmtSeconds(s int32) string {
	if s == 0 {
		return "-"
	}
	return (time.Duration(s) * time.Second).String()
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

// enumName prints an enum value without its type prefix: "CRON" for
// SCHEDULE_TYPE_CRON, and "none" for an unset (UNSPECIFIED) value.
func enumName(e protoreflect.Enum, prefix string) string {
	if e.Number() == 0 {
		return "none"
	}
	v := e.Descriptor().Values().ByNumber(e.Number())
	if v == nil {
		return fmt.Sprint(e.Number())
	}
	return strings.TrimPrefix(string(v.Name()), prefix)
}

// enumValues lists an enum's values in lower case without their prefix,
// for help texts and errors.
func enumValues(ed protoreflect.EnumDescriptor, prefix string) string {
	return strings.Join(enumWords(ed, prefix), ", ")
}

// enumWords returns the names of ed's values but the zero one, without
// prefix, in lower case: what the flags take.
func enumWords(ed protoreflect.EnumDescriptor, prefix string) []string {
	var names []string
	for i := 1; i < ed.Values().Len(); i++ {
		names = append(names, strings.ToLower(strings.TrimPrefix(string(ed.Values().Get(i).Name()), prefix)))
	}
	return names
}

// parseEnum reads an enum value by name, with or without its prefix and in
// any case: "round_robin" is ROUTE_STRATEGY_ROUND_ROBIN.
func parseEnum(flagName, s string, ed protoreflect.EnumDescriptor, prefix string) (protoreflect.EnumNumber, error) {
	name := strings.ToUpper(strings.ReplaceAll(s, "-", "_"))
	if !strings.HasPrefix(name, prefix) {
		name = prefix + name
	}
	v := ed.Values().ByName(protoreflect.Name(name))
	if v == nil || v.Number() == 0 {
		return 0, usagef("--%s: unknown value %q (want one of %s)", flagName, s, enumValues(ed, prefix))
	}
	return v.Number(), nil
}

func parseID(what, s string) (int64, error) {
	id, err := strconv.ParseInt(s, 10, 64)
	if err != nil || id <= 0 {
		return 0, usagef("%s: not an id: %q", what, s)
	}
	return id, nil
}

func parseIDList(flagName, s string) ([]int64, error) {
	if s == "" {
		return nil, nil
	}
	var ids []int64
	for _, part := range strings.Split(s, ",") {
		id, err := parseID("--"+flagName, strings.TrimSpace(part))
		if err != nil {
			return nil, err
		}
		ids = append(ids, id)
	}
	return ids, nil
}

func splitList(s string) []string {
	if s == "" {
		return nil
	}
	var out []string
	for _, part := range strings.Split(s, ",") {
		if part = strings.TrimSpace(part); part != "" {
			out = append(out, part)
		}
	}
	return out
}

// parseTime reads an RFC 3339 time flag; "" is no time.
func parseTime(flagName, s string) (*timestamppb.Timestamp, error) {
	if s == "" {
		return nil, nil
	}
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		return nil, usagef("--%s: want an RFC 3339 time such as 2026-01-02T15:04:05Z: %v", flagName, err)
	}
	return timestamppb.New(t), nil
}
