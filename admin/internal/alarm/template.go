package alarm

import (
	"bytes"
	"encoding/json"
	"errors"
	"text/template"
	"text/template/parse"
	"time"
)

// maxTemplateOutput bounds what a TEMPLATE webhook's template may render.
const maxTemplateOutput = 1 << 20

// templateFuncs are the functions a webhook template may call besides
// text/template's builtins: json quotes a value as JSON ({{json .Message}}
// is a JSON string, escaped).
var templateFuncs = template.FuncMap{
	"json": func(v any) (string, error) {
		b, err := json.Marshal(v)
		return string(b), err
	},
}

// sampleEvent is the alarm a template is tried on when it is set.
var sampleEvent = Event{
	RunID: 1, JobID: 1, JobDescription: "job", Owner: "owner", GroupID: 1, Handler: "handler", Status: "FAILED",
	Message: "message", Attempt: 0, RetryCount: 0, ExecutorAddress: "127.0.0.1:9999", TriggerType: "SCHEDULE",
	ScheduledAt: time.Unix(0, 0).UTC(), FinishedAt: time.Unix(1, 0).UTC(), Final: true, RunURL: "https://carillon.example.com/",
	FailedNodes: []string{"node"},
}

// ParseTemplate parses text, a TEMPLATE webhook's template (Go
// text/template over an Event, with the json function), and renders it
// once on a sample alarm, so that one that names a field an Event lacks
// is refused when it is set, not when a run fails.
func ParseTemplate(text string) (*template.Template, error) {
	t, err := parseTemplate(text)
	if err != nil {
		return nil, err
	}
	if _, err := execute(t, sampleEvent); err != nil {
		return nil, err
	}
	return t, nil
}

// render is the output of template text on e.
func render(text string, e Event) ([]byte, error) {
	t, err := parseTemplate(text)
	if err != nil {
		return nil, err
	}
	return execute(t, e)
}

// parseTemplate parses text as a webhook template.
func parseTemplate(text string) (*template.Template, error) {
	t, err := template.New("alarm").Funcs(templateFuncs).Option("missingkey=error").Parse(text)
	if err != nil {
		return nil, err
	}
	for _, d := range t.Templates() {
		if d.Tree != nil {
			if err := checkRanges(d.Tree.Root); err != nil {
				return nil, err
			}
		}
	}
	return t, nil
}

// errRange refuses a range over anything but the alarm's failed nodes: a
// range over a number ({{range .RunID}}, {{range 1000000000}}) loops that
// many times, and would hold the admin's alarms, or the call that sets
// the template, for as long.
var errRange = errors.New("a webhook template may range only over .FailedNodes")

// checkRanges refuses the ranges under n that errRange names.
func checkRanges(n parse.Node) error {
	switch n := n.(type) {
	case *parse.ListNode:
		if n == nil {
			return nil
		}
		for _, c := range n.Nodes {
			if err := checkRanges(c); err != nil {
				return err
			}
		}
	case *parse.RangeNode:
		if !overFailedNodes(n.Pipe) {
			return errRange
		}
		return errors.Join(checkRanges(n.List), checkRanges(n.ElseList))
	case *parse.IfNode:
		return errors.Join(checkRanges(n.List), checkRanges(n.ElseList))
	case *parse.WithNode:
		return errors.Join(checkRanges(n.List), checkRanges(n.ElseList))
	}
	return nil
}

// overFailedNodes reports whether p is .FailedNodes or $.FailedNodes,
// with or without a declaration ({{range $i, $n := .FailedNodes}}).
func overFailedNodes(p *parse.PipeNode) bool {
	if p == nil || len(p.Cmds) != 1 || len(p.Cmds[0].Args) != 1 {
		return false
	}
	switch a := p.Cmds[0].Args[0].(type) {
	case *parse.FieldNode:
		return len(a.Ident) == 1 && a.Ident[0] == "FailedNodes"
	case *parse.VariableNode:
		return len(a.Ident) == 2 && a.Ident[0] == "$" && a.Ident[1] == "FailedNodes"
	}
	return false
}

// errTooLong is a template's output past maxTemplateOutput.
var errTooLong = errors.New("the template renders more than 1 MiB")

// execute renders t on e, up to maxTemplateOutput bytes.
func execute(t *template.Template, e Event) ([]byte, error) {
	var b limitedBuffer
	if err := t.Execute(&b, e); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// limitedBuffer is a bytes.Buffer that refuses to grow past
// maxTemplateOutput.
type limitedBuffer struct{ bytes.Buffer }

// Write implements io.Writer.
func (b *limitedBuffer) Write(p []byte) (int, error) {
	if b.Len()+len(p) > maxTemplateOutput {
		return 0, errTooLong
	}
	return b.Buffer.Write(p)
}
