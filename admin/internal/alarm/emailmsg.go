package alarm

import (
	"bytes"
	"fmt"
	"html/template"
	"strings"
	"time"

	mail "github.com/wneessen/go-mail"
)

// message is the e-mail of e: From, To, a UTF-8 Subject (encoded), Date,
// Message-ID, and the same text as text/plain and text/html alternatives,
// with a link to the run's page where the admin knows its public URL.
func (m *Email) message(e Event) (*mail.Msg, error) {
	msg := mail.NewMsg(mail.WithNoDefaultUserAgent())
	if err := msg.From(m.From); err != nil {
		return nil, fmt.Errorf("sender %q: %w", m.From, err)
	}
	if err := msg.To(e.Emails...); err != nil {
		return nil, fmt.Errorf("recipients %q: %w", e.Emails, err)
	}
	if e.WorkflowRunID != 0 {
		msg.Subject(fmt.Sprintf("[carillon] workflow %d %q: workflow run %d %s", e.WorkflowID, e.WorkflowName, e.WorkflowRunID, e.Status))
	} else {
		msg.Subject(fmt.Sprintf("[carillon] job %d %q: run %d %s", e.JobID, e.JobDescription, e.RunID, e.Status))
	}
	msg.SetDate()
	msg.SetMessageID()
	msg.SetUserAgent("Carillon")
	var text, html bytes.Buffer
	for _, f := range eventFields(e) {
		fmt.Fprintf(&text, "%-10s %s\n", f[0]+":", f[1])
	}
	text.WriteString("\n" + e.Message + "\n")
	if e.RunURL != "" {
		text.WriteString("\nThe run: " + e.RunURL + "\n")
	}
	if err := emailHTML.Execute(&html, struct {
		Fields  [][2]string
		Message string
		RunURL  string
	}{eventFields(e), e.Message, e.RunURL}); err != nil {
		return nil, err
	}
	msg.SetBodyString(mail.TypeTextPlain, text.String())
	msg.AddAlternativeString(mail.TypeTextHTML, html.String())
	return msg, nil
}

// eventFields are the lines that sum up e, name and value.
func eventFields(e Event) [][2]string {
	if e.WorkflowRunID != 0 {
		return [][2]string{{"Workflow", fmt.Sprintf("%d %s", e.WorkflowID, e.WorkflowName)},
			{"Run", fmt.Sprintf("workflow run %d, attempt %d, %s", e.WorkflowRunID, e.Attempt+1, e.TriggerType)},
			{"Status", e.Status}, {"Failed", strings.Join(e.FailedNodes, ", ")},
			{"Scheduled", e.ScheduledAt.Format(time.RFC3339)}, {"Finished", e.FinishedAt.Format(time.RFC3339)}}
	}
	attempt := fmt.Sprintf("%d, attempt %d of %d, %s", e.RunID, e.Attempt+1, e.RetryCount+1, e.TriggerType)
	if !e.Final {
		attempt += ", to be retried"
	}
	job := fmt.Sprintf("%d %s", e.JobID, e.JobDescription)
	if e.Owner != "" {
		job += " (owner " + e.Owner + ")"
	}
	fields := [][2]string{{"Job", job}, {"Run", attempt}, {"Status", e.Status}}
	if e.ExecutorAddress != "" {
		fields = append(fields, [2]string{"Executor", e.ExecutorAddress})
	}
	return append(fields, [2]string{"Scheduled", e.ScheduledAt.Format(time.RFC3339)}, [2]string{"Finished", e.FinishedAt.Format(time.RFC3339)})
}

// emailHTML is the text/html part: the fields as a table, the run's
// message as preformatted text, the link to the run.
var emailHTML = template.Must(template.New("alarm").Parse(strings.TrimSpace(`
<!DOCTYPE html>
<html><head><meta charset="utf-8"></head><body>
<table>
{{- range .Fields}}
<tr><th align="left">{{index . 0}}</th><td>{{index . 1}}</td></tr>
{{- end}}
</table>
<pre>{{.Message}}</pre>
{{- if .RunURL}}
<p><a href="{{.RunURL}}">The run in Carillon's console</a></p>
{{- end}}
</body></html>
`)))
