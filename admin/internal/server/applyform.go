package server

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/carillonhq/carillon/admin/internal/store"
	carillonv1 "github.com/carillonhq/carillon/proto/carillon/v1"
)

// The apply form of a group, job or calendar is how ApplyService takes
// and exports it: its input fields only (no ids, no output), references
// by name. Apply compares the forms of what is stored and what is asked
// for, field by field, so the same definitions make an empty plan.

// applyJobIDFields name other objects by id; apply names them otherwise
// (ApplyJob.group, child_jobs, calendars), so they must be unset.
var applyJobIDFields = []string{"id", "group_id", "child_job_ids", "calendar_ids"}

// clearFields clears the fields of m named (proto names), where m has them.
func clearFields(m proto.Message, names []string) {
	r := m.ProtoReflect()
	for _, n := range names {
		if fd := r.Descriptor().Fields().ByName(protoreflect.Name(n)); fd != nil {
			r.Clear(fd)
		}
	}
}

// groupForm is g's apply form.
func groupForm(g store.Group) *carillonv1.Group {
	p := groupToProto(g, nil)
	if g.AddressMode == carillonv1.AddressMode_ADDRESS_MODE_MANUAL {
		p.Addresses = g.Addresses
	}
	clearFields(p, groupOutputFields)
	return p
}

// calendarForm is c's apply form.
func calendarForm(c store.Calendar) *carillonv1.Calendar {
	p := calendarToProto(c)
	clearFields(p, calendarOutputFields)
	return p
}

// jobForm is the apply form of a job of group app, its child jobs and
// calendars named by ref (childRef) and calendars by id.
func jobForm(j store.Job, app string, childRef func(id int64) string, calendars map[int64]string) *carillonv1.ApplyJob {
	p := jobToProto(j)
	clearJobOutput(p)
	clearFields(p, applyJobIDFields)
	out := &carillonv1.ApplyJob{Group: app, Job: p}
	for _, id := range j.ChildJobIDs {
		out.ChildJobs = append(out.ChildJobs, childRef(id))
	}
	for _, id := range j.CalendarIDs {
		name, ok := calendars[id]
		if !ok {
			name = fmt.Sprintf("#%d", id)
		}
		out.Calendars = append(out.Calendars, name)
	}
	return out
}

// clearOutput clears the fields of m named in outputs but enabled, which
// apply sets (CreateJob and CreateWorkflow take it too).
func clearOutput(m proto.Message, outputs []string) {
	for _, f := range outputs {
		if f != "enabled" {
			clearFields(m, []string{f})
		}
	}
}

// clearJobOutput clears a job's output fields but enabled.
func clearJobOutput(p *carillonv1.Job) {
	clearOutput(p, jobOutputFields)
	if p.Script != nil {
		p.Script.UpdatedAt = nil
	}
}

// childRef names job child, of group childApp, for a job of group app:
// its name, with "app/" before it when in another group; "#id" when it
// has no name.
func childRef(app, childApp, name string, id int64) string {
	if name == "" {
		return fmt.Sprintf("#%d", id)
	}
	if childApp == app {
		return name
	}
	return childApp + "/" + name
}

// splitRef splits a child job reference of a job of group app into its
// group and name: "name" is of app.
func splitRef(app, ref string) (string, string) {
	if g, n, ok := strings.Cut(ref, "/"); ok {
		return g, n
	}
	return app, ref
}

// diffFields lists the fields (JSON names, "schedule.cron") in which a
// and b, messages of one type, differ.
func diffFields(a, b proto.Message) []string {
	return diffReflect(a.ProtoReflect(), b.ProtoReflect(), "")
}

func diffReflect(a, b protoreflect.Message, prefix string) []string {
	var out []string
	fields := a.Descriptor().Fields()
	for i := range fields.Len() {
		fd := fields.Get(i)
		name := prefix + fd.JSONName()
		if fd.Message() != nil && !fd.IsList() && !fd.IsMap() && a.Has(fd) && b.Has(fd) {
			out = append(out, diffReflect(a.Get(fd).Message(), b.Get(fd).Message(), name+".")...)
			continue
		}
		if a.Has(fd) != b.Has(fd) || !a.Get(fd).Equal(b.Get(fd)) {
			out = append(out, name)
		}
	}
	return out
}

// applyIndex matches the item a field path of an ApplyRequest starts
// with, and the message it wraps: "jobs[3].job".
var applyIndex = regexp.MustCompile(`^(groups|jobs|workflows|calendars)\[(\d+)\](\.job\b|\.workflow\b)?`)

// applyName names a field of r that broke a buf.validate rule as Apply's
// other errors do, with the item's identity: "jobs[3].job.name" is
// "jobs[3] (billing/invoices).name".
func applyName(r *carillonv1.ApplyRequest, field string) string {
	m := applyIndex.FindStringSubmatch(field)
	if m == nil {
		return field
	}
	i, err := strconv.Atoi(m[2])
	if err != nil {
		return field
	}
	id := ""
	switch {
	case m[1] == "groups" && i < len(r.Groups):
		id = r.Groups[i].GetAppName()
	case m[1] == "calendars" && i < len(r.Calendars):
		id = r.Calendars[i].GetName()
	case m[1] == "jobs" && i < len(r.Jobs):
		id = r.Jobs[i].GetGroup() + "/" + r.Jobs[i].GetJob().GetName()
	case m[1] == "workflows" && i < len(r.Workflows):
		id = r.Workflows[i].GetGroup() + "/" + r.Workflows[i].GetWorkflow().GetName()
	default:
		return field
	}
	return fmt.Sprintf("%s[%d] (%s)%s", m[1], i, id, field[len(m[0]):])
}
