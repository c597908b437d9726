package server

import (
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/carillonhq/carillon/admin/internal/calendar"
	"github.com/carillonhq/carillon/admin/internal/schedule"
	"github.com/carillonhq/carillon/admin/internal/store"
	carillonv1 "github.com/carillonhq/carillon/proto/carillon/v1"
)

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
