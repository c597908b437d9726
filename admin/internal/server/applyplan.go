package server

import (
	"fmt"
	"slices"
	"strings"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/carillonhq/carillon/admin/internal/store"
	carillonv1 "github.com/carillonhq/carillon/proto/carillon/v1"
)

// plan checks every definition of the request and computes its change,
// refusing the first bad one or one the caller may not change.
func (r *applyRun) plan() error {
	if err := r.planCalendars(); err != nil {
		return err
	}
	if err := r.planGroups(); err != nil {
		return err
	}
	if err := r.planJobs(); err != nil {
		return err
	}
	if err := r.planWorkflows(); err != nil {
		return err
	}
	if err := r.planPruneWorkflows(); err != nil {
		return err
	}
	return r.planPrune()
}

func (r *applyRun) planCalendars() error {
	seen := map[string]bool{}
	for i, c := range r.req.Calendars {
		field := fmt.Sprintf("calendars[%d] (%s)", i, c.GetName())
		want := proto.Clone(c).(*carillonv1.Calendar)
		clearFields(want, calendarOutputFields)
		sc, _, err := checkCalendar(want)
		if err != nil {
			return renamed(err, "calendar", field)
		}
		if seen[sc.Name] {
			return invalid(field+".name", "calendar %q is listed twice", sc.Name)
		}
		seen[sc.Name] = true
		want = calendarForm(sc)
		cur, ok := r.calendars[sc.Name]
		var curForm *carillonv1.Calendar
		if ok {
			curForm = calendarForm(cur)
		}
		ch := r.change("calendar", sc.Name, cur.ID, curForm, want, "")
		if err := r.adminChange(field, ch); err != nil {
			return err
		}
		r.calItems = append(r.calItems, applyItem[*carillonv1.Calendar]{field: field, want: want, change: ch})
	}
	return nil
}

func (r *applyRun) planGroups() error {
	seen := map[string]bool{}
	for i, g := range r.req.Groups {
		field := fmt.Sprintf("groups[%d] (%s)", i, g.GetAppName())
		want := proto.Clone(g).(*carillonv1.Group)
		clearFields(want, groupOutputFields)
		if err := renamed(checkGroupText(want), "group", field); err != nil {
			return err
		}
		if err := renamed(checkGroup(want), "group", field); err != nil {
			return err
		}
		if seen[want.AppName] {
			return invalid(field+".app_name", "group %q is listed twice", want.AppName)
		}
		seen[want.AppName] = true
		want = groupForm(groupFromProto(want))
		cur, ok := r.groups[want.AppName]
		var curForm *carillonv1.Group
		if ok {
			curForm = groupForm(cur)
		}
		ch := r.change("group", want.AppName, cur.ID, curForm, want, "")
		if err := r.adminChange(field, ch); err != nil {
			return err
		}
		r.groupItems = append(r.groupItems, applyItem[*carillonv1.Group]{field: field, want: want, change: ch})
	}
	return nil
}

// wantGroup returns the group of app as it will be: the request's, or
// the stored one; nil if neither has it.
func (r *applyRun) wantGroup(app string) *carillonv1.Group {
	for _, it := range r.groupItems {
		if it.want.AppName == app {
			return it.want
		}
	}
	if g, ok := r.groups[app]; ok {
		return groupForm(g)
	}
	return nil
}

// wantJob reports whether the request defines job name of group app.
func (r *applyRun) wantJob(app, name string) bool {
	for _, it := range r.jobItems {
		if it.want.Group == app && it.want.Job.Name == name {
			return true
		}
	}
	for _, j := range r.req.Jobs {
		if j.GetGroup() == app && j.GetJob().GetName() == name {
			return true
		}
	}
	return false
}

func (r *applyRun) planJobs() error {
	seen := map[string]bool{}
	for i, in := range r.req.Jobs {
		it, err := r.checkJob(i, in)
		if err != nil {
			return err
		}
		key := it.want.Group + "/" + it.want.Job.Name
		if seen[key] {
			return invalid(it.field+".name", "job %q of group %q is listed twice", it.want.Job.Name, it.want.Group)
		}
		seen[key] = true
		cur, ok := r.jobs[it.want.Group][it.want.Job.Name]
		var curForm *carillonv1.ApplyJob
		if ok {
			curForm = jobForm(cur, it.want.Group, func(id int64) string { return r.ref(it.want.Group, id) }, r.calName)
		}
		it.change = r.change("job", key, cur.ID, curForm, it.want, "job.")
		if it.change.Action != carillonv1.ApplyAction_APPLY_ACTION_UNCHANGED {
			if err := r.checkJobAccess(it, cur); err != nil {
				return err
			}
		}
		r.jobItems = append(r.jobItems, it)
	}
	return nil
}

// checkJob checks job i of the request as CreateJob does, its references
// too, and returns its apply form with its defaults.
func (r *applyRun) checkJob(i int, in *carillonv1.ApplyJob) (applyItem[*carillonv1.ApplyJob], error) {
	field := fmt.Sprintf("jobs[%d] (%s/%s)", i, in.GetGroup(), in.GetJob().GetName())
	it := applyItem[*carillonv1.ApplyJob]{field: field}
	want := proto.Clone(in).(*carillonv1.ApplyJob)
	j := want.Job
	if want.Group == "" {
		return it, invalid(field+".group", "required: the app_name of the job's group")
	}
	g := r.wantGroup(want.Group)
	if g == nil {
		return it, invalid(field+".group", "no group %q: define it under groups or create it first", want.Group)
	}
	if j.Name == "" {
		return it, invalid(field+".name", "required: apply identifies a job by its group and name")
	}
	for _, f := range applyJobIDFields {
		if fd := j.ProtoReflect().Descriptor().Fields().ByName(protoreflect.Name(f)); j.ProtoReflect().Has(fd) {
			return it, invalid(field+"."+f, "ids differ from admin to admin: name the %s instead (group, childJobs, calendars)", strings.TrimSuffix(strings.TrimSuffix(f, "_ids"), "_id"))
		}
	}
	if j.AlarmWebhookSecret != "" {
		return it, invalid(field+".alarm_webhook_secret",
			"secrets are not applied from files (they would sit in version control): set it with carillon job update --alarm-secret; apply keeps a job's stored secret")
	}
	clearJobOutput(j)
	check := proto.Clone(j).(*carillonv1.Job)
	check.GroupId = 1 // its group is checked above
	if err := renamed(checkJobText(check), "job", field); err != nil {
		return it, err
	}
	if err := renamed(checkJob(check), "job", field); err != nil {
		return it, err
	}
	if err := renamed(checkScriptGroup(check, g), "job", field); err != nil {
		return it, err
	}
	check.GroupId = 0
	want.Job = check
	for k, c := range want.ChildJobs {
		app, name := splitRef(want.Group, c)
		cf := fmt.Sprintf("%s.childJobs[%d]", field, k)
		if _, ok := r.jobs[app][name]; !ok && !r.wantJob(app, name) {
			return it, invalid(cf, "no job %q in group %q: define it under jobs or create it first", name, app)
		}
		if app == want.Group && name == j.Name {
			return it, invalid(cf, "a job cannot be its own child job")
		}
		want.ChildJobs[k] = childRef(want.Group, app, name, 0)
		if slices.Contains(want.ChildJobs[:k], want.ChildJobs[k]) {
			return it, invalid(cf, "job %q is listed twice", c)
		}
	}
	for k, c := range want.Calendars {
		cf := fmt.Sprintf("%s.calendars[%d]", field, k)
		if _, ok := r.calendars[c]; !ok && !slices.ContainsFunc(r.calItems, func(ci applyItem[*carillonv1.Calendar]) bool { return ci.want.Name == c }) {
			return it, invalid(cf, "no calendar %q: define it under calendars or create it first", c)
		}
		if slices.Contains(want.Calendars[:k], c) {
			return it, invalid(cf, "calendar %q is listed twice", c)
		}
	}
	it.want = want
	return it, nil
}

// checkJobAccess requires the caller to operate the job's group and the
// groups of its child jobs (as CreateJob does), and an ADMIN or an
// allowed prefix for a new webhook.
func (r *applyRun) checkJobAccess(it applyItem[*carillonv1.ApplyJob], cur store.Job) error {
	return r.checkAccess(it.field, it.want.Group, it.want.ChildJobs, ".childJobs[%d]", it.want.Job.AlarmWebhookUrl, cur.AlarmWebhookURL)
}

// checkAccess requires the caller to operate group app, where item field
// goes, and the groups of the jobs refs names (naming a child job or a
// node's job is operating it; refField says where each is), and an ADMIN
// or an allowed prefix for a new webhook (old: the stored one).
func (r *applyRun) checkAccess(field, app string, refs []string, refField, webhook, old string) error {
	if g, ok := r.groups[app]; ok {
		if err := writeGroup(r.p, field, g.ID); err != nil {
			return err
		}
	}
	for k, ref := range refs {
		refApp, _ := splitRef(app, ref)
		if g, ok := r.groups[refApp]; ok {
			if err := writeGroup(r.p, field+fmt.Sprintf(refField, k), g.ID); err != nil {
				return err
			}
		}
	}
	return r.s.checkWebhook(r.ctx, field+".alarm_webhook_url", webhook, old)
}

// planPrune plans, with req.Prune, the deletion of the stored jobs of the
// request's groups that it does not define.
func (r *applyRun) planPrune() error {
	if !r.req.Prune {
		return nil
	}
	for _, it := range r.groupItems {
		g, ok := r.groups[it.want.AppName]
		if !ok {
			continue
		}
		js, err := r.a.JobsOf(g.ID)
		if err != nil {
			return err
		}
		for _, j := range js {
			if j.Name != "" && r.wantJob(g.AppName, j.Name) {
				continue
			}
			name := g.AppName + "/" + j.Name
			if j.Name == "" {
				name = fmt.Sprintf("%s/#%d", g.AppName, j.ID)
			}
			if err := writeGroup(r.p, it.field, g.ID); err != nil {
				return err
			}
			r.deletes = append(r.deletes, j)
			r.changes = append(r.changes, &carillonv1.ApplyChange{Kind: "job", Name: name, Id: j.ID, Action: carillonv1.ApplyAction_APPLY_ACTION_DELETE})
		}
	}
	return nil
}
