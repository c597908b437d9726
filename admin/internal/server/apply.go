package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"connectrpc.com/connect"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/carillonhq/carillon/admin/internal/auth"
	"github.com/carillonhq/carillon/admin/internal/calendar"
	"github.com/carillonhq/carillon/admin/internal/schedule"
	"github.com/carillonhq/carillon/admin/internal/store"
	carillonv1 "github.com/carillonhq/carillon/proto/carillon/v1"
)

// applyService implements carillonv1connect.ApplyServiceHandler.
type applyService struct{ *Server }

// applyAction is the audit log's name of the changes Apply makes.
const applyAction = "ApplyService.Apply"

// applyRun is one Apply in its transaction: what is stored, indexed by
// the names apply uses, and the plan as it is computed and made.
type applyRun struct {
	s   applyService
	ctx context.Context
	p   *auth.Principal
	a   *store.ApplyTx
	req *carillonv1.ApplyRequest

	groups    map[string]store.Group // by app name
	groupApp  map[int64]string
	calendars map[string]store.Calendar // by name
	calName   map[int64]string
	jobs      map[string]map[string]store.Job // by app name, then name
	jobByID   map[int64]store.Job
	workflows map[string]map[string]store.Workflow // by app name, then name

	calItems   []applyItem[*carillonv1.Calendar]
	groupItems []applyItem[*carillonv1.Group]
	jobItems   []applyItem[*carillonv1.ApplyJob]
	wfItems    []applyItem[*carillonv1.ApplyWorkflow]
	deletes    []store.Job
	wfDeletes  []store.Workflow
	changes    []*carillonv1.ApplyChange
}

// applyItem is one definition of the request with its plan.
type applyItem[T proto.Message] struct {
	field  string // how errors name it: "jobs[3] (app/name)"
	want   T      // its apply form, checked and with its defaults
	change *carillonv1.ApplyChange
}

// Apply computes the plan of req in one write transaction, checks the
// caller may make each change, and makes it unless req.DryRun.
func (s applyService) Apply(ctx context.Context, req *carillonv1.ApplyRequest) (*carillonv1.ApplyResponse, error) {
	r := &applyRun{s: s, ctx: ctx, p: auth.FromContext(ctx), req: req}
	var groupsCapped []int64
	err := s.cfg.Store.Apply(ctx, s.cfg.NowFunc(), func(a *store.ApplyTx) error {
		r.a = a
		if err := r.load(); err != nil {
			return err
		}
		if err := r.plan(); err != nil {
			return err
		}
		var err error
		if groupsCapped, err = r.make(); err != nil {
			return err
		}
		if req.DryRun {
			return store.ErrDryRun
		}
		return nil
	})
	if err != nil {
		var ce *connect.Error
		if errors.As(err, &ce) {
			return nil, err
		}
		return nil, s.toConnect(err)
	}
	res := &carillonv1.ApplyResponse{Changes: r.changes, Applied: !req.DryRun}
	if req.DryRun {
		for _, c := range res.Changes {
			if c.Action == carillonv1.ApplyAction_APPLY_ACTION_CREATE {
				c.Id = 0 // rolled back
			}
		}
		return res, nil
	}
	for _, id := range groupsCapped {
		// A cap raised or removed frees slots: the runs waiting for one
		// try again (as UpdateGroup).
		waiting, err := s.cfg.Store.WaitingRuns(ctx, id, waitingRequeueMax)
		if err != nil {
			return nil, s.toConnect(err)
		}
		s.cfg.Trigger.Dispatcher.Requeue(waiting)
	}
	s.cfg.WakeFunc()
	return res, nil
}

// load reads the groups and calendars, and the jobs of the groups the
// request names.
func (r *applyRun) load() error {
	gs, err := r.a.Groups()
	if err != nil {
		return err
	}
	r.groups, r.groupApp = map[string]store.Group{}, map[int64]string{}
	for _, g := range gs {
		r.groups[g.AppName], r.groupApp[g.ID] = g, g.AppName
	}
	cs, err := r.a.Calendars()
	if err != nil {
		return err
	}
	r.calendars, r.calName = map[string]store.Calendar{}, map[int64]string{}
	for _, c := range cs {
		r.calendars[c.Name], r.calName[c.ID] = c, c.Name
	}
	r.jobs, r.jobByID = map[string]map[string]store.Job{}, map[int64]store.Job{}
	apps := []string{}
	for _, g := range r.req.Groups {
		apps = append(apps, g.GetAppName())
	}
	for _, j := range r.req.Jobs {
		apps = append(apps, j.GetGroup())
		for _, c := range j.GetChildJobs() {
			app, _ := splitRef(j.GetGroup(), c)
			apps = append(apps, app)
		}
	}
	for _, w := range r.req.Workflows {
		apps = append(apps, w.GetGroup())
		for _, ref := range w.GetNodeJobs() {
			app, _ := splitRef(w.GetGroup(), ref)
			apps = append(apps, app)
		}
	}
	for _, app := range apps {
		if err := r.loadJobs(app); err != nil {
			return err
		}
	}
	return r.loadWorkflows()
}

// loadJobs reads the jobs of group app, once.
func (r *applyRun) loadJobs(app string) error {
	g, ok := r.groups[app]
	if _, done := r.jobs[app]; done || !ok {
		return nil
	}
	js, err := r.a.JobsOf(g.ID)
	if err != nil {
		return err
	}
	r.jobs[app] = map[string]store.Job{}
	for _, j := range js {
		r.jobByID[j.ID] = j
		if j.Name != "" {
			r.jobs[app][j.Name] = j
		}
	}
	return nil
}

// ref names stored job id for a job of group app (childRef).
func (r *applyRun) ref(app string, id int64) string {
	j, ok := r.jobByID[id]
	if !ok {
		var err error
		if j, err = r.a.Job(id); err != nil {
			return fmt.Sprintf("#%d", id)
		}
		r.jobByID[id] = j
	}
	return childRef(app, r.groupApp[j.GroupID], j.Name, id)
}

// change records one item of the plan.
func (r *applyRun) change(kind, name string, id int64, cur, want proto.Message, trim string) *carillonv1.ApplyChange {
	c := &carillonv1.ApplyChange{Kind: kind, Name: name, Id: id}
	switch {
	case id == 0:
		c.Action = carillonv1.ApplyAction_APPLY_ACTION_CREATE
	default:
		for _, f := range diffFields(cur, want) {
			c.Fields = append(c.Fields, strings.TrimPrefix(f, trim))
		}
		c.Action = carillonv1.ApplyAction_APPLY_ACTION_UNCHANGED
		if len(c.Fields) > 0 {
			c.Action = carillonv1.ApplyAction_APPLY_ACTION_UPDATE
		}
	}
	r.changes = append(r.changes, c)
	return c
}

// adminChange refuses a change of a non-ADMIN to what only an ADMIN
// changes (groups, calendars).
func (r *applyRun) adminChange(field string, c *carillonv1.ApplyChange) error {
	if c.Action == carillonv1.ApplyAction_APPLY_ACTION_UNCHANGED || r.p.Admin() {
		return nil
	}
	return denied(field, "only an ADMIN may %s a %s", actionVerb(c.Action), c.Kind)
}

func actionVerb(a carillonv1.ApplyAction) string {
	return strings.ToLower(strings.TrimPrefix(a.String(), "APPLY_ACTION_"))
}

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

// make writes the plan, and returns the groups whose concurrency cap
// changed.
func (r *applyRun) make() ([]int64, error) {
	if err := r.makeCalendars(); err != nil {
		return nil, err
	}
	capped, err := r.makeGroups()
	if err != nil {
		return nil, err
	}
	if err := r.makeJobs(); err != nil {
		return nil, err
	}
	if err := r.makeWorkflows(); err != nil {
		return nil, err
	}
	if err := r.makePrune(); err != nil {
		return nil, err
	}
	return capped, r.audit()
}

func (r *applyRun) makeCalendars() error {
	for _, it := range r.calItems {
		c, _, err := checkCalendar(it.want)
		if err != nil {
			return renamed(err, "calendar", it.field)
		}
		switch it.change.Action {
		case carillonv1.ApplyAction_APPLY_ACTION_CREATE:
			if c, err = r.a.CreateCalendar(c); err != nil {
				return err
			}
		case carillonv1.ApplyAction_APPLY_ACTION_UPDATE:
			c.ID = it.change.Id
			r.calendars[c.Name] = c // its jobs' next fires read it so
			if c, err = r.a.UpdateCalendar(c, r.nextFire); err != nil {
				return err
			}
		default:
			continue
		}
		it.change.Id = c.ID
		r.calendars[c.Name], r.calName[c.ID] = c, c.Name
	}
	return nil
}

// nextFire is the next fire of started job j after its calendar changed.
func (r *applyRun) nextFire(j store.Job) (time.Time, error) {
	spec, err := r.spec(j)
	if err != nil {
		return time.Time{}, err
	}
	return schedule.Recompute(spec, j.NextFireAt, r.a.Now())
}

// spec is job j's schedule with its calendars as the transaction has
// them.
func (r *applyRun) spec(j store.Job) (schedule.Spec, error) {
	spec := schedule.SpecOf(j)
	if len(j.CalendarIDs) == 0 {
		return spec, nil
	}
	var set []*calendar.Calendar
	for _, id := range j.CalendarIDs {
		c, ok := r.calendars[r.calName[id]]
		if !ok {
			return spec, fmt.Errorf("%w: calendar %d", store.ErrCalendarNotFound, id)
		}
		cal, err := calendar.Compile(c.Definition)
		if err != nil {
			return spec, fmt.Errorf("calendar %d: %w", id, err)
		}
		set = append(set, cal)
	}
	spec.Calendars = calendar.NewSet(set...)
	return spec, nil
}

func (r *applyRun) makeGroups() ([]int64, error) {
	var capped []int64
	for _, it := range r.groupItems {
		g := groupFromProto(it.want)
		var err error
		switch it.change.Action {
		case carillonv1.ApplyAction_APPLY_ACTION_CREATE:
			g, err = r.a.CreateGroup(g)
		case carillonv1.ApplyAction_APPLY_ACTION_UPDATE:
			g.ID = it.change.Id
			if g.MaxConcurrency != r.groups[g.AppName].MaxConcurrency {
				capped = append(capped, g.ID)
			}
			g, err = r.a.UpdateGroup(g)
		default:
			continue
		}
		if err != nil {
			return nil, err
		}
		it.change.Id = g.ID
		r.groups[g.AppName], r.groupApp[g.ID] = g, g.AppName
		if r.jobs[g.AppName] == nil { // a new group has no jobs yet
			r.jobs[g.AppName] = map[string]store.Job{}
		}
	}
	return capped, nil
}

// storeJob is the job of it as the store takes it, its references
// resolved (its child jobs only with children).
func (r *applyRun) storeJob(it applyItem[*carillonv1.ApplyJob], children bool) store.Job {
	j := jobFromProto(it.want.Job)
	j.GroupID = r.groups[it.want.Group].ID
	for _, c := range it.want.Calendars {
		j.CalendarIDs = append(j.CalendarIDs, r.calendars[c].ID)
	}
	if children {
		for _, c := range it.want.ChildJobs {
			app, name := splitRef(it.want.Group, c)
			j.ChildJobIDs = append(j.ChildJobIDs, r.jobs[app][name].ID)
		}
	}
	return j
}

// firstFire is the first fire of job j after now, refusing a schedule
// that never fires (as CreateJob does), named under field.
func (r *applyRun) firstFire(field string, j store.Job) (time.Time, error) {
	spec, err := r.spec(j)
	if err != nil {
		return time.Time{}, err
	}
	next, err := r.s.firstInstant(spec, r.a.Now(), "job")
	return next, renamed(err, "job", field)
}

func (r *applyRun) makeJobs() error {
	// First the new jobs, without their child jobs: those may be new too.
	for _, it := range r.jobItems {
		if it.change.Action != carillonv1.ApplyAction_APPLY_ACTION_CREATE {
			continue
		}
		j := r.storeJob(it, false)
		next, err := r.firstFire(it.field, j)
		if err != nil {
			return err
		}
		if it.want.Job.Enabled {
			j.Enabled, j.NextFireAt = true, next
		}
		if j, err = r.a.CreateJob(j); err != nil {
			return renamed(err, "job", it.field)
		}
		it.change.Id = j.ID
		r.jobs[it.want.Group][j.Name], r.jobByID[j.ID] = j, j
	}
	for _, it := range r.jobItems {
		if err := r.makeJob(it); err != nil {
			return err
		}
	}
	for _, it := range r.jobItems {
		if it.change.Action == carillonv1.ApplyAction_APPLY_ACTION_UNCHANGED || len(it.want.ChildJobs) == 0 {
			continue
		}
		if path, err := r.cycle(it.change.Id); err != nil || path != nil {
			if err != nil {
				return err
			}
			return invalid(it.field+".childJobs", "the child links form a cycle: %s", formatPath(path))
		}
	}
	return nil
}

// makeJob sets the child jobs of a new job, or updates a changed one.
func (r *applyRun) makeJob(it applyItem[*carillonv1.ApplyJob]) error {
	j := r.storeJob(it, true)
	switch it.change.Action {
	case carillonv1.ApplyAction_APPLY_ACTION_CREATE:
		if len(j.ChildJobIDs) == 0 {
			return nil
		}
		return r.a.SetChildJobs(it.change.Id, j.ChildJobIDs)
	case carillonv1.ApplyAction_APPLY_ACTION_UPDATE:
	default:
		return nil
	}
	old := r.jobByID[it.change.Id]
	j.ID, j.AlarmWebhookSecret = old.ID, old.AlarmWebhookSecret // write-only: never in a file
	if slices.ContainsFunc(it.change.Fields, func(f string) bool { return f != "enabled" }) {
		changed := schedule.SpecOf(j) != schedule.SpecOf(old) || !slices.Equal(j.CalendarIDs, old.CalendarIDs)
		if changed {
			next, err := r.firstFire(it.field, j)
			if err != nil {
				return err
			}
			if old.Enabled {
				j.NextFireAt = next
			}
		}
		if _, err := r.a.UpdateJob(j, changed); err != nil {
			return renamed(err, "job", it.field)
		}
	}
	if it.want.Job.Enabled == old.Enabled {
		return nil
	}
	var next time.Time
	if it.want.Job.Enabled {
		var err error
		if next, err = r.firstFire(it.field, j); err != nil {
			return err
		}
	}
	return r.a.SetJobEnabled(j.ID, it.want.Job.Enabled, next)
}

// cycle returns a chain of child links from job id back to itself, or
// nil if there is none.
func (r *applyRun) cycle(id int64) ([]int64, error) {
	seen := map[int64]bool{}
	var walk func(from int64) ([]int64, error)
	walk = func(from int64) ([]int64, error) {
		j, err := r.a.Job(from)
		if errors.Is(err, store.ErrNotFound) {
			return nil, nil
		}
		if err != nil {
			return nil, err
		}
		for _, c := range j.ChildJobIDs {
			if c == id {
				return []int64{from, id}, nil
			}
			if seen[c] {
				continue
			}
			seen[c] = true
			p, err := walk(c)
			if err != nil || p != nil {
				return append([]int64{from}, p...), err
			}
		}
		return nil, nil
	}
	return walk(id)
}

// makePrune deletes the pruned workflows, then the pruned jobs, first
// dropping them from each other's child lists.
func (r *applyRun) makePrune() error {
	for _, w := range r.wfDeletes {
		if err := r.a.DeleteWorkflow(w.ID); err != nil {
			return err
		}
	}
	for _, j := range r.deletes {
		if err := r.a.SetChildJobs(j.ID, nil); err != nil {
			return err
		}
	}
	for _, j := range r.deletes {
		if err := r.a.DeleteJob(j.ID); err != nil {
			return err
		}
	}
	return nil
}

// audit records each change of the plan in the audit log, in the
// transaction.
func (r *applyRun) audit() error {
	for _, c := range r.changes {
		if c.Action == carillonv1.ApplyAction_APPLY_ACTION_UNCHANGED {
			continue
		}
		detail, err := json.Marshal(map[string]any{"action": actionVerb(c.Action), "name": c.Name, "fields": c.Fields})
		if err != nil {
			return err
		}
		e := store.AuditEntry{At: r.a.Now(), Action: applyAction, Target: fmt.Sprintf("%s %d", c.Kind, c.Id), Detail: string(detail)}
		if r.p != nil {
			e.UserID, e.Username = r.p.UserID, r.p.Username
		}
		if err := r.a.Audit(e); err != nil {
			return err
		}
	}
	return nil
}
