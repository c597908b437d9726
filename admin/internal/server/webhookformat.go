package server

import (
	"slices"

	"google.golang.org/protobuf/types/known/fieldmaskpb"

	"github.com/carillonhq/carillon/admin/internal/alarm"
	carillonv1 "github.com/carillonhq/carillon/proto/carillon/v1"
)

// checkWebhookFormat checks what a job's alarm webhook receives: a
// template with TEMPLATE only (required there) that parses and renders a
// sample alarm, and a secret only with a format that signs.
func checkWebhookFormat(j *carillonv1.Job) error {
	format := j.AlarmWebhookFormat
	switch {
	case format == carillonv1.AlarmWebhookFormat_ALARM_WEBHOOK_FORMAT_TEMPLATE && j.AlarmWebhookTemplate == "":
		return invalid("job.alarm_webhook_template", "required with ALARM_WEBHOOK_FORMAT_TEMPLATE: a Go text/template over the alarm, e.g. {\"text\": {{json .Message}}}")
	case format != carillonv1.AlarmWebhookFormat_ALARM_WEBHOOK_FORMAT_TEMPLATE && j.AlarmWebhookTemplate != "":
		return invalid("job.alarm_webhook_template", "used only with ALARM_WEBHOOK_FORMAT_TEMPLATE, and job.alarm_webhook_format is %s: clear it, or set that format", format)
	case format == carillonv1.AlarmWebhookFormat_ALARM_WEBHOOK_FORMAT_WECOM || format == carillonv1.AlarmWebhookFormat_ALARM_WEBHOOK_FORMAT_SLACK:
		if j.AlarmWebhookSecret != "" {
			return invalid("job.alarm_webhook_secret", "%s does not sign its messages, so it takes no secret: "+
				"clear it (name alarm_webhook_secret in update_mask with an empty value)", format)
		}
	}
	if j.AlarmWebhookTemplate != "" {
		if _, err := alarm.ParseTemplate(j.AlarmWebhookTemplate); err != nil {
			return invalid("job.alarm_webhook_template", "not a template that renders an alarm: %v", err)
		}
	}
	return nil
}

// keepWebhookSecret keeps the stored secret of a job being updated
// (stored) unless the update sets one or its mask names
// alarm_webhook_secret: the secret is write-only, so a job read and sent
// back whole does not clear it; naming it with "" does.
func keepWebhookSecret(merged *carillonv1.Job, mask *fieldmaskpb.FieldMask, stored string) {
	if merged.AlarmWebhookSecret == "" && !slices.Contains(mask.GetPaths(), "alarm_webhook_secret") {
		merged.AlarmWebhookSecret = stored
	}
}
