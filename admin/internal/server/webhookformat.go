package server

import (
	"errors"
	"slices"

	"google.golang.org/protobuf/types/known/fieldmaskpb"

	"github.com/carillonhq/carillon/admin/internal/alarm"
	carillonv1 "github.com/carillonhq/carillon/proto/carillon/v1"
)

// checkWebhookFormat checks what a job's alarm webhook receives: a
// template with TEMPLATE only (required there) that parses and renders a
// sample alarm, and a secret only with a format that signs.
func checkWebhookFormat(j *carillonv1.Job) error {
	err := alarm.CheckJobWebhook(j.AlarmWebhookFormat, j.AlarmWebhookSecret, j.AlarmWebhookTemplate)
	var fe *alarm.FieldError
	if errors.As(err, &fe) {
		if fe.Field == "job.alarm_webhook_secret" {
			fe.Rule += ": clear it (name alarm_webhook_secret in update_mask with an empty value)"
		}
		return invalid(fe.Field, "%s", fe.Rule)
	}
	return err
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
