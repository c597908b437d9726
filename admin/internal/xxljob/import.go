package xxljob

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"google.golang.org/protobuf/types/known/timestamppb"

	carillonv1 "github.com/carillonhq/carillon/proto/carillon/v1"
)

// ImportOptions says how an xxl-job database becomes Carillon groups and
// jobs.
type ImportOptions struct {
	// AllowScripts sets Group.allow_scripts on every imported group, so
	// that its GLUE script jobs are sent to its executors. Defaults to
	// false: they are imported, and their runs fail "not sent" until the
	// group allows scripts.
	AllowScripts bool
	// TimeZone is the IANA zone of the imported cron schedules: xxl-job
	// evaluates cron in its JVM's zone. Defaults to "": the admin's zone.
	TimeZone string
	// DBLocation is the zone of the dump's DATETIME columns (glue_updatetime),
	// the JDBC connection's. Defaults to time.Local.
	DBLocation *time.Location
}

// RowError is a row of the dump that cannot be imported.
type RowError struct {
	Table  string // xxl_job_group or xxl_job_info
	ID     string // the row's id, as in the dump
	Reason string
}

func (e *RowError) Error() string {
	return fmt.Sprintf("%s id %s: %s", e.Table, e.ID, e.Reason)
}

// Tables of an xxl-job database that Import reads.
const (
	GroupTable = "xxl_job_group"
	JobTable   = "xxl_job_info"
)

// Import reads a mysqldump of an xxl-job database (xxl-job 2.1 to 3.5:
// the INSERTs of xxl_job_group and xxl_job_info, with the CREATE TABLEs or
// --complete-insert column lists) into an ImportJobsRequest: every group
// as an XXL_JOB group, every job in its group, ids the dump's. A row that
// cannot be converted is a *RowError naming it.
func Import(dump string, opts ImportOptions) (*carillonv1.ImportJobsRequest, error) {
	if opts.DBLocation == nil {
		opts.DBLocation = time.Local
	}
	tables, err := readDump(dump, GroupTable, JobTable)
	if err != nil {
		return nil, fmt.Errorf("read the dump: %w", err)
	}
	req := &carillonv1.ImportJobsRequest{}
	for _, r := range tables[GroupTable].rows {
		g, err := importGroup(r, opts)
		if err != nil {
			return nil, err
		}
		req.Groups = append(req.Groups, g)
	}
	if len(req.Groups) == 0 {
		return nil, fmt.Errorf("the dump has no rows of %s: dump the xxl-job database with mysqldump (its INSERTs of %s and %s)", GroupTable, GroupTable, JobTable)
	}
	for _, r := range tables[JobTable].rows {
		j, err := importJob(r, opts)
		if err != nil {
			return nil, err
		}
		req.Jobs = append(req.Jobs, j)
	}
	return req, nil
}

func rowErr(table string, r row, format string, args ...any) error {
	return &RowError{Table: table, ID: r.str("id"), Reason: fmt.Sprintf(format, args...)}
}

// int64Of parses column c of r, which must be an integer; absent or NULL
// is def.
func int64Of(table string, r row, c string, def int64) (int64, error) {
	v, ok := r[c]
	if !ok || v.null {
		return def, nil
	}
	n, err := strconv.ParseInt(strings.TrimSpace(v.text), 10, 64)
	if err != nil {
		return 0, rowErr(table, r, "%s: not an integer: %q", c, v.text)
	}
	return n, nil
}

func int32Of(table string, r row, c string) (int32, error) {
	n, err := int64Of(table, r, c, 0)
	if err != nil {
		return 0, err
	}
	if n < 0 || n > 1<<31-1 {
		return 0, rowErr(table, r, "%s: %d is out of range", c, n)
	}
	return int32(n), nil
}

// importGroup converts a row of xxl_job_group.
func importGroup(r row, opts ImportOptions) (*carillonv1.Group, error) {
	id, err := int64Of(GroupTable, r, "id", 0)
	if err != nil {
		return nil, err
	}
	g := &carillonv1.Group{
		Id: id, AppName: r.str("app_name"), Title: r.str("title"),
		ExecutorProtocol: carillonv1.ExecutorProtocol_EXECUTOR_PROTOCOL_XXL_JOB, AllowScripts: opts.AllowScripts,
	}
	if r.has("name") { // 3.5 renamed title to name
		g.Title = r.str("name")
	}
	mode, err := int64Of(GroupTable, r, "address_type", 0)
	if err != nil {
		return nil, err
	}
	switch mode {
	case 0:
		g.AddressMode = carillonv1.AddressMode_ADDRESS_MODE_AUTO
	case 1:
		g.AddressMode = carillonv1.AddressMode_ADDRESS_MODE_MANUAL
		g.Addresses = splitList(r.str("address_list"))
	default:
		return nil, rowErr(GroupTable, r, "address_type: %d is neither 0 (automatic) nor 1 (manual)", mode)
	}
	return g, nil
}

// routeStrategies maps xxl-job's route strategies to Carillon's.
var routeStrategies = map[string]carillonv1.RouteStrategy{
	"FIRST":                 carillonv1.RouteStrategy_ROUTE_STRATEGY_FIRST,
	"LAST":                  carillonv1.RouteStrategy_ROUTE_STRATEGY_LAST,
	"ROUND":                 carillonv1.RouteStrategy_ROUTE_STRATEGY_ROUND_ROBIN,
	"RANDOM":                carillonv1.RouteStrategy_ROUTE_STRATEGY_RANDOM,
	"CONSISTENT_HASH":       carillonv1.RouteStrategy_ROUTE_STRATEGY_CONSISTENT_HASH,
	"LEAST_FREQUENTLY_USED": carillonv1.RouteStrategy_ROUTE_STRATEGY_LEAST_FREQUENTLY_USED,
	"LEAST_RECENTLY_USED":   carillonv1.RouteStrategy_ROUTE_STRATEGY_LEAST_RECENTLY_USED,
	"FAILOVER":              carillonv1.RouteStrategy_ROUTE_STRATEGY_FAILOVER,
	"BUSYOVER":              carillonv1.RouteStrategy_ROUTE_STRATEGY_BUSYOVER,
	"SHARDING_BROADCAST":    carillonv1.RouteStrategy_ROUTE_STRATEGY_SHARDING_BROADCAST,
}

// importJob converts a row of xxl_job_info.
func importJob(r row, opts ImportOptions) (*carillonv1.Job, error) {
	const t = JobTable
	id, err := int64Of(t, r, "id", 0)
	if err != nil {
		return nil, err
	}
	group, err := int64Of(t, r, "job_group", 0)
	if err != nil {
		return nil, err
	}
	j := &carillonv1.Job{
		Id: id, GroupId: group, Owner: r.str("author"), Param: r.str("executor_param"),
	}
	for _, e := range splitList(r.str("alarm_email")) { // de-duplicated, as xxl-job's alarm does
		if !slices.Contains(j.AlarmEmails, e) {
			j.AlarmEmails = append(j.AlarmEmails, e)
		}
	}
	j.AlarmEveryFailure = len(j.AlarmEmails) > 0 // xxl-job alarms on every failed attempt
	switch {
	case r.has("name"): // 3.5
		j.Description = r.str("name")
	default:
		j.Description = r.str("job_desc")
	}
	if j.Schedule, err = importSchedule(r, opts); err != nil {
		return nil, err
	}
	switch m := r.str("misfire_strategy"); m {
	case "", "DO_NOTHING":
		j.MisfireStrategy = carillonv1.MisfireStrategy_MISFIRE_STRATEGY_DO_NOTHING
	case "FIRE_ONCE_NOW":
		j.MisfireStrategy = carillonv1.MisfireStrategy_MISFIRE_STRATEGY_FIRE_ONCE_NOW
	default:
		return nil, rowErr(t, r, "misfire_strategy: unknown %q", m)
	}
	route := r.str("executor_route_strategy")
	if j.RouteStrategy = routeStrategies[route]; j.RouteStrategy == 0 {
		if route != "" {
			return nil, rowErr(t, r, "executor_route_strategy: unknown %q", route)
		}
		j.RouteStrategy = carillonv1.RouteStrategy_ROUTE_STRATEGY_FIRST
	}
	switch b := r.str("executor_block_strategy"); b {
	case "DISCARD_LATER":
		j.BlockStrategy = carillonv1.BlockStrategy_BLOCK_STRATEGY_DISCARD_LATER
	case "COVER_EARLY":
		j.BlockStrategy = carillonv1.BlockStrategy_BLOCK_STRATEGY_COVER_EARLY
	default: // xxl-job's executors take any other value as serial
		j.BlockStrategy = carillonv1.BlockStrategy_BLOCK_STRATEGY_SERIAL
	}
	if j.TimeoutSeconds, err = int32Of(t, r, "executor_timeout"); err != nil {
		return nil, err
	}
	if j.RetryCount, err = int32Of(t, r, "executor_fail_retry_count"); err != nil {
		return nil, err
	}
	glue := r.str("glue_type")
	typ, ok := ScriptType(glue)
	switch {
	case !ok:
		return nil, rowErr(t, r, "glue_type: unknown %q", glue)
	case typ == carillonv1.ScriptType_SCRIPT_TYPE_UNSPECIFIED:
		j.Handler = r.str("executor_handler")
	default:
		j.Script = &carillonv1.Script{Type: typ, Source: r.str("glue_source")}
		if at := r[("glue_updatetime")]; !at.null && at.text != "" {
			u, err := time.ParseInLocation(time.DateTime, at.text, opts.DBLocation)
			if err != nil {
				return nil, rowErr(t, r, "glue_updatetime: not a DATETIME: %q", at.text)
			}
			j.Script.UpdatedAt = timestamppb.New(u)
		}
	}
	for _, c := range splitList(r.str("child_jobid")) {
		n, err := strconv.ParseInt(c, 10, 64)
		if err != nil || n <= 0 {
			return nil, rowErr(t, r, "child_jobid: %q is not a job id", c)
		}
		if !slices.Contains(j.ChildJobIds, n) {
			j.ChildJobIds = append(j.ChildJobIds, n)
		}
	}
	status, err := int64Of(t, r, "trigger_status", 0)
	if err != nil {
		return nil, err
	}
	j.Enabled = status == 1
	return j, nil
}

// importSchedule converts a job's schedule: schedule_type and
// schedule_conf (2.3 and later), or job_cron (before 2.3, cron only).
func importSchedule(r row, opts ImportOptions) (*carillonv1.Schedule, error) {
	const t = JobTable
	if !r.has("schedule_type") {
		return &carillonv1.Schedule{Type: carillonv1.ScheduleType_SCHEDULE_TYPE_CRON, Cron: r.str("job_cron"), TimeZone: opts.TimeZone}, nil
	}
	conf := strings.TrimSpace(r.str("schedule_conf"))
	switch typ := r.str("schedule_type"); typ {
	case "NONE", "":
		return &carillonv1.Schedule{Type: carillonv1.ScheduleType_SCHEDULE_TYPE_NONE}, nil
	case "CRON":
		return &carillonv1.Schedule{Type: carillonv1.ScheduleType_SCHEDULE_TYPE_CRON, Cron: conf, TimeZone: opts.TimeZone}, nil
	case "FIX_RATE":
		n, err := strconv.ParseInt(conf, 10, 32)
		if err != nil || n < 1 {
			return nil, rowErr(t, r, "schedule_conf: FIX_RATE needs whole seconds, at least 1, got %q", conf)
		}
		return &carillonv1.Schedule{Type: carillonv1.ScheduleType_SCHEDULE_TYPE_FIX_RATE, IntervalSeconds: int32(n)}, nil
	default:
		return nil, rowErr(t, r, "schedule_type: unknown %q (xxl-job has NONE, CRON and FIX_RATE)", typ)
	}
}

// splitList splits a comma-separated list, trimming and dropping empty
// items.
func splitList(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}
