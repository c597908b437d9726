package server

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"connectrpc.com/connect"

	"github.com/carillonhq/carillon/admin/internal/schedule"
	"github.com/carillonhq/carillon/admin/internal/store"
	carillonv1 "github.com/carillonhq/carillon/proto/carillon/v1"
)

// maxImport bounds the groups plus jobs of one ImportJobs request.
const maxImport = 10000

// checkImportLimits checks an ImportJobs request's size and each group's
// and job's characters, as CreateGroup's and CreateJob's rows do (their
// buf.validate rules are checked before, named by importName).
func checkImportLimits(r *carillonv1.ImportJobsRequest) error {
	if n := len(r.Groups) + len(r.Jobs); n > maxImport {
		return invalid("groups", "at most %d groups and jobs in one import, got %d", maxImport, n)
	}
	for i, g := range r.Groups {
		if err := renamed(checkGroupText(g), "group", groupField(i, g)); err != nil {
			return err
		}
	}
	for i, j := range r.Jobs {
		if err := renamed(checkJobText(j), "job", jobField(i, j)); err != nil {
			return err
		}
	}
	return nil
}

// importIndex matches the group or job a field path of an ImportJobs
// request starts with: "jobs[3]".
var importIndex = regexp.MustCompile(`^(groups|jobs)\[(\d+)\]`)

// importName names a field of r that broke a buf.validate rule as the
// request's other errors do, with its source id: "jobs[3].handler" is
// "jobs[3] (source id 12).handler".
func importName(r *carillonv1.ImportJobsRequest, field string) string {
	m := importIndex.FindStringSubmatch(field)
	if m == nil {
		return field
	}
	i, err := strconv.Atoi(m[2])
	if err != nil {
		return field
	}
	rest := field[len(m[0]):]
	switch {
	case m[1] == "groups" && i < len(r.Groups):
		return groupField(i, r.Groups[i]) + rest
	case m[1] == "jobs" && i < len(r.Jobs):
		return jobField(i, r.Jobs[i]) + rest
	}
	return field
}

func groupField(i int, g *carillonv1.Group) string {
	return fmt.Sprintf("groups[%d] (source id %d)", i, g.GetId())
}

func jobField(i int, j *carillonv1.Job) string {
	return fmt.Sprintf("jobs[%d] (source id %d)", i, j.GetId())
}

// renamed returns err, an invalid_argument naming a field under prefix
// from ("job.schedule.cron"), naming it under to instead
// ("jobs[3] (source id 12).schedule.cron"). Other errors pass unchanged.
func renamed(err error, from, to string) error {
	var ce *connect.Error
	if err == nil || !errors.As(err, &ce) || ce.Code() != connect.CodeInvalidArgument {
		return err
	}
	msg := ce.Message()
	if rest, ok := strings.CutPrefix(msg, from); ok {
		msg = to + rest
	} else {
		msg = to + ": " + msg
	}
	return connect.NewError(connect.CodeInvalidArgument, errors.New(msg))
}

// ImportJobs checks every group and job as CreateGroup and CreateJob do,
// with ids the request's own, then creates them in one transaction.
func (s jobService) ImportJobs(ctx context.Context, req *carillonv1.ImportJobsRequest) (*carillonv1.ImportJobsResponse, error) {
	im, err := s.checkImport(req)
	if err != nil {
		return nil, err
	}
	res := &carillonv1.ImportJobsResponse{}
	if req.DryRun {
		for _, g := range req.Groups {
			g.Id = 0
			res.Groups = append(res.Groups, g)
		}
		res.Jobs = append(res.Jobs, req.Jobs...)
		return res, nil
	}
	out, err := s.cfg.Store.Jobs.Import(ctx, im, s.cfg.NowFunc())
	if err != nil {
		return nil, s.toConnect(err)
	}
	for _, g := range out.Groups {
		res.Groups = append(res.Groups, groupToProto(g, g.Addresses))
	}
	for _, j := range out.Jobs {
		res.Jobs = append(res.Jobs, jobToProto(j))
	}
	res.GroupIds, res.JobIds = out.GroupIDs, out.JobIDs
	s.cfg.WakeFunc()
	return res, nil
}

// checkImport checks and completes the groups and jobs of req, and
// returns them for the store: group ids unique, each job's group and
// children in the request, no cycle of child links, enabled jobs' first
// fires computed.
func (s jobService) checkImport(req *carillonv1.ImportJobsRequest) (store.Import, error) {
	if len(req.Groups) == 0 {
		return store.Import{}, invalid("groups", "required: at least one group to import")
	}
	var im store.Import
	groups := map[int64]*carillonv1.Group{}
	for i, g := range req.Groups {
		field := groupField(i, g)
		if err := renamed(checkGroup(g), "group", field); err != nil {
			return store.Import{}, err
		}
		if g.Id <= 0 {
			return store.Import{}, invalid(field+".id", "must be the group's positive source id")
		}
		if groups[g.Id] != nil {
			return store.Import{}, invalid(field+".id", "source id %d is used by two groups", g.Id)
		}
		groups[g.Id] = g
		im.Groups = append(im.Groups, groupFromProto(g))
	}
	jobs := map[int64]*carillonv1.Job{}
	for i, j := range req.Jobs {
		if j.GetId() > 0 && jobs[j.Id] != nil {
			return store.Import{}, invalid(jobField(i, j)+".id", "source id %d is used by two jobs", j.Id)
		}
		jobs[j.GetId()] = j
	}
	now := s.cfg.NowFunc()
	for i, j := range req.Jobs {
		field := jobField(i, j)
		if err := renamed(checkJob(j), "job", field); err != nil {
			return store.Import{}, err
		}
		if j.Id <= 0 {
			return store.Import{}, invalid(field+".id", "must be the job's positive source id")
		}
		g := groups[j.GroupId]
		if g == nil {
			return store.Import{}, invalid(field+".group_id", "group %d is not one of the request's groups", j.GroupId)
		}
		if err := renamed(checkScriptGroup(j, g), "job", field); err != nil {
			return store.Import{}, err
		}
		if j.AlarmWebhookUrl != "" {
			return store.Import{}, invalid(field+".alarm_webhook_url", "not imported: set webhooks with UpdateJob")
		}
		for k, c := range j.ChildJobIds {
			if jobs[c] == nil {
				return store.Import{}, invalid(fmt.Sprintf("%s.child_job_ids[%d]", field, k), "job %d is not one of the request's jobs", c)
			}
		}
		sj := jobFromProto(j)
		next, err := s.firstFire(schedule.SpecOf(sj), now) // a cron that never fires: refused, enabled or not
		if err != nil {
			return store.Import{}, renamed(err, "job", field)
		}
		if j.Enabled {
			sj.Enabled, sj.NextFireAt = true, next
		}
		im.Jobs = append(im.Jobs, sj)
	}
	if path := importCycle(req.Jobs, jobs); path != nil {
		return store.Import{}, invalid(fmt.Sprintf("jobs (source id %d).child_job_ids", path[0]),
			"the child links form a cycle: %s", formatPath(path))
	}
	return im, nil
}

// importCycle returns a cycle of child links among jobs (by source id),
// as the path from a job back to itself, or nil if there is none.
func importCycle(order []*carillonv1.Job, jobs map[int64]*carillonv1.Job) []int64 {
	const (
		visiting = 1
		done     = 2
	)
	state := map[int64]int{}
	var stack []int64
	var visit func(id int64) []int64
	visit = func(id int64) []int64 {
		switch state[id] {
		case visiting:
			for i, s := range stack {
				if s == id {
					return append(append([]int64{}, stack[i:]...), id)
				}
			}
		case done:
			return nil
		}
		state[id] = visiting
		stack = append(stack, id)
		for _, c := range jobs[id].GetChildJobIds() {
			if p := visit(c); p != nil {
				return p
			}
		}
		stack = stack[:len(stack)-1]
		state[id] = done
		return nil
	}
	for _, j := range order {
		if p := visit(j.Id); p != nil {
			return p
		}
	}
	return nil
}

// checkScriptGroup refuses a Groovy script job in a group whose executors
// are not xxl-job's: only xxl-job-core runs Groovy.
func checkScriptGroup(j *carillonv1.Job, g *carillonv1.Group) error {
	if j.GetScript().GetType() == carillonv1.ScriptType_SCRIPT_TYPE_GROOVY &&
		g.ExecutorProtocol != carillonv1.ExecutorProtocol_EXECUTOR_PROTOCOL_XXL_JOB {
		return invalid("job.script.type", "SCRIPT_TYPE_GROOVY runs only on xxl-job executors: group %q is not an EXECUTOR_PROTOCOL_XXL_JOB group", g.AppName)
	}
	return nil
}
