package alarm

import (
	"fmt"
	"strings"

	carillonv1 "github.com/carillonhq/carillon/proto/carillon/v1"
)

// FormatNames are the names ParseFormat takes, in the enum's order.
var FormatNames = []string{"json", "dingtalk", "feishu", "wecom", "slack", "template"}

// ParseFormat returns the AlarmWebhookFormat named name: one of
// FormatNames, in any case, or the enum's full name
// (ALARM_WEBHOOK_FORMAT_SLACK); "" is UNSPECIFIED (JSON).
func ParseFormat(name string) (carillonv1.AlarmWebhookFormat, error) {
	if name == "" {
		return carillonv1.AlarmWebhookFormat_ALARM_WEBHOOK_FORMAT_UNSPECIFIED, nil
	}
	full := strings.ToUpper(name)
	if !strings.HasPrefix(full, "ALARM_WEBHOOK_FORMAT_") {
		full = "ALARM_WEBHOOK_FORMAT_" + full
	}
	if v, ok := carillonv1.AlarmWebhookFormat_value[full]; ok {
		return carillonv1.AlarmWebhookFormat(v), nil
	}
	return 0, fmt.Errorf("%q: want one of %s", name, strings.Join(FormatNames, ", "))
}

// CheckWebhook checks the admin-wide webhook's format, secret and template
// as the API checks a job's: a template with TEMPLATE only (required
// there) that renders a sample alarm, and a secret only with a format
// that signs. The error names the serve flag at fault.
func CheckWebhook(format carillonv1.AlarmWebhookFormat, secret, template string) error {
	return checkTarget(format, secret, template, "alarm-webhook-template", "alarm-webhook-secret", "--alarm-webhook-format template")
}

// checkTarget is CheckWebhook with the names of the template's and the
// secret's fields and of the TEMPLATE format, for its errors.
func checkTarget(format carillonv1.AlarmWebhookFormat, secret, template, templateField, secretField, templateFormat string) error {
	isTemplate := format == carillonv1.AlarmWebhookFormat_ALARM_WEBHOOK_FORMAT_TEMPLATE
	switch {
	case isTemplate && template == "":
		return &FieldError{templateField, "required with " + templateFormat + `: a Go text/template over the alarm, e.g. {"text": {{json .Message}}}`}
	case !isTemplate && template != "":
		return &FieldError{templateField, fmt.Sprintf("used only with %s, and the format is %s: clear it, or set that format", templateFormat, format)}
	case secret != "" && !signs(format):
		return &FieldError{secretField, fmt.Sprintf("%s does not sign its messages, so it takes no secret", format)}
	}
	if template != "" {
		if _, err := ParseTemplate(template); err != nil {
			return &FieldError{templateField, fmt.Sprintf("not a template that renders an alarm: %v", err)}
		}
	}
	return nil
}

// CheckJobWebhook is CheckWebhook for a job's alarm_webhook_format,
// _secret and _template; the error names the field (job.alarm_webhook_...).
func CheckJobWebhook(format carillonv1.AlarmWebhookFormat, secret, template string) error {
	return checkTarget(format, secret, template, "job.alarm_webhook_template", "job.alarm_webhook_secret", "ALARM_WEBHOOK_FORMAT_TEMPLATE")
}

// FieldError is a bad webhook setting: the field (or flag) and the rule.
type FieldError struct {
	Field string
	Rule  string
}

// Error implements error.
func (e *FieldError) Error() string { return e.Field + ": " + e.Rule }

// signs says whether format signs with a secret: WeCom's and Slack's
// robots do not.
func signs(format carillonv1.AlarmWebhookFormat) bool {
	return format != carillonv1.AlarmWebhookFormat_ALARM_WEBHOOK_FORMAT_WECOM && format != carillonv1.AlarmWebhookFormat_ALARM_WEBHOOK_FORMAT_SLACK
}
