package paramtmpl

import (
	"errors"
	"fmt"
	"strings"
	"text/template"
	"text/template/parse"
	"time"
)

// MaxBytes bounds a rendered param, as Job.param's max_bytes bounds the
// template.
const MaxBytes = 65536

// Data is what a param template renders over: one run's logical time and
// place.
type Data struct {
	// ScheduledAt is the run's scheduled instant in its job's time zone.
	ScheduledAt time.Time
	JobID       int64
	RunID       int64
	// Attempt is 0 for the first attempt, n for the n-th retry.
	Attempt int32
	// ShardIndex is the run's shard, 0 to ShardTotal-1.
	ShardIndex int32
	ShardTotal int32
}

// Template is a parsed param template and the time zone it renders its
// scheduled instant in.
type Template struct {
	t   *template.Template
	loc *time.Location
}

// Parse parses src, a param template, for a job in time zone zone (""
// is UTC). Its error says what is wrong, in words for the job's author.
func Parse(src, zone string) (*Template, error) {
	loc, err := time.LoadLocation(zone)
	if err != nil {
		return nil, fmt.Errorf("unknown time zone %q", zone)
	}
	t, err := template.New("param").Option("missingkey=error").Parse(src)
	if err != nil {
		return nil, errors.New(strings.TrimPrefix(err.Error(), "template: "))
	}
	if len(t.Templates()) > 1 {
		return nil, errors.New("a param template may not define templates (define, block)")
	}
	if t.Tree != nil && t.Root != nil {
		if err := check(t.Root); err != nil {
			return nil, err
		}
	}
	return &Template{t: t, loc: loc}, nil
}

// check refuses the actions that could make a render long: loops and
// calls of other templates.
func check(n parse.Node) error {
	switch n := n.(type) {
	case *parse.ListNode:
		if n == nil {
			return nil
		}
		for _, c := range n.Nodes {
			if err := check(c); err != nil {
				return err
			}
		}
	case *parse.RangeNode:
		return errors.New("a param template may not use range")
	case *parse.TemplateNode:
		return errors.New("a param template may not call templates")
	case *parse.IfNode:
		return checkBranch(&n.BranchNode)
	case *parse.WithNode:
		return checkBranch(&n.BranchNode)
	}
	return nil
}

// checkBranch checks both lists of an if or with action.
func checkBranch(b *parse.BranchNode) error {
	if err := check(b.List); err != nil {
		return err
	}
	if b.ElseList != nil {
		return check(b.ElseList)
	}
	return nil
}

// Render renders t over d, its scheduled instant moved to t's time zone.
// The output is at most MaxBytes long.
func (t *Template) Render(d Data) (string, error) {
	d.ScheduledAt = d.ScheduledAt.In(t.loc)
	var w limited
	if err := t.t.Execute(&w, d); err != nil {
		if errors.Is(err, errTooLong) {
			return "", errTooLong
		}
		return "", errors.New(strings.TrimPrefix(err.Error(), "template: "))
	}
	return w.b.String(), nil
}

// errTooLong is a render longer than MaxBytes.
var errTooLong = fmt.Errorf("the rendered param is longer than %d bytes", MaxBytes)

// limited is a buffer that refuses to grow past MaxBytes.
type limited struct{ b strings.Builder }

func (w *limited) Write(p []byte) (int, error) {
	if w.b.Len()+len(p) > MaxBytes {
		return 0, errTooLong
	}
	return w.b.Write(p)
}
