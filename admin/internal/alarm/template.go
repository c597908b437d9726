package alarm

import (
	"bytes"
	"encoding/json"
	"errors"
	"text/template"
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
	return template.New("alarm").Funcs(templateFuncs).Option("missingkey=error").Parse(text)
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
