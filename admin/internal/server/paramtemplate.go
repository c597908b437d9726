package server

import (
	"github.com/carillonhq/carillon/admin/internal/paramtmpl"
)

// checkParamTemplate refuses param, a param of a job whose param is a
// template (Job.param_template) in time zone zone, unless it parses as
// one: field names it in the invalid_argument error. A param of another
// job is sent as it is, braces and all.
func checkParamTemplate(field, param, zone string, template bool) error {
	if !template {
		return nil
	}
	if _, err := paramtmpl.Parse(param, zone); err != nil {
		return invalid(field, "not a valid param template (job.param_template is set): %v", err)
	}
	return nil
}
