package main

import (
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"math"
	"slices"
	"strings"
	"text/tabwriter"
	"time"
)

// result is what a load test measured; it is printed as a summary or as
// JSON (the field names are the JSON's).
type result struct {
	Machine  machineInfo  `json:"machine"`
	Setup    setupInfo    `json:"setup"`
	Window   windowInfo   `json:"window"`
	Fires    fireInfo     `json:"fires"`
	Lateness latenessInfo `json:"lateness_ms"`
	// Claimed is how late the admin claimed the fires of the window
	// (runs.triggered_at minus scheduled_at, millisecond precision): its
	// share of Lateness before the dispatch call.
	Claimed *latenessInfo `json:"claim_lateness_ms,omitempty"`
	// Bursts is the lateness of each instant of the window on which at
	// least burstMin fires were due, in order: whether a burst's lateness
	// is every burst's or a few slow ones'.
	Bursts    []burstInfo   `json:"bursts,omitempty"`
	Runs      runInfo       `json:"runs"`
	Resources resourceInfo  `json:"resources"`
	Sparse    *sparseInfo   `json:"sparse,omitempty"`
	Readers   *readerInfo   `json:"readers,omitempty"`
	Failover  *failoverInfo `json:"failover,omitempty"`
	Workflows *workflowInfo `json:"workflows,omitempty"`
	PerfTop   string        `json:"perf_top,omitempty"`
}

type machineInfo struct {
	CPUs  int    `json:"cpus"`
	Model string `json:"model"`
	Go    string `json:"go"`
}

type setupInfo struct {
	AdminURL             string  `json:"admin_url"`
	Admins               int     `json:"admins,omitempty"`
	Database             string  `json:"database,omitempty"`
	AdminLog             string  `json:"admin_log,omitempty"`
	LogLevel             string  `json:"admin_log_level"`
	ExecutorDir          string  `json:"executor_dir,omitempty"`
	Auth                 string  `json:"auth,omitempty"`
	Jobs                 int     `json:"jobs"`
	Executors            int     `json:"executors"`
	Schedule             string  `json:"schedule"`
	Route                string  `json:"route"`
	Sparse               int     `json:"sparse_jobs"`
	SparseYearly         bool    `json:"sparse_yearly,omitempty"`
	Warmup               float64 `json:"warmup_s"`
	Duration             float64 `json:"duration_s"`
	SparseInsertSeconds  float64 `json:"sparse_insert_s,omitempty"`
	AdminStartSeconds    float64 `json:"admin_start_s,omitempty"`
	CreateJobsSeconds    float64 `json:"create_jobs_s,omitempty"`
	History              int     `json:"history_runs,omitempty"`
	HistoryInsertSeconds float64 `json:"history_insert_s,omitempty"`
	// AdminStop says what went wrong stopping the admins after the
	// measurement (an overloaded admin handing its claimed fires over
	// for longer than the tool waits, say); empty when they stopped.
	AdminStop string `json:"admin_stop,omitempty"`
}

type windowInfo struct {
	Start string `json:"start"`
	End   string `json:"end"`
}

type fireInfo struct {
	// Expected fires have their instant in the window.
	Expected int `json:"expected"`
	// Received are the distinct expected fires that reached an executor.
	Received int `json:"received"`
	Missed   int `json:"missed"`
	// MissedRecorded of the missed fires are recorded in the database as
	// misfires (SKIPPED runs standing for them); Neither are neither run
	// nor recorded. Nil when the database was not read.
	MissedRecorded *int `json:"missed_recorded,omitempty"`
	Neither        *int `json:"neither_run_nor_recorded,omitempty"`
	// NeitherAs breaks Neither down by the status of the fire's run in the
	// database ("RUNNING", "FAILED": refused unsent, …; "none": no run
	// stored). Nil when the database was not read.
	NeitherAs map[string]int `json:"neither_as,omitempty"`
	// Duplicated counts extra receipts of a fire of the window; DuplicatedAll
	// of any fire of the whole test.
	Duplicated    int `json:"duplicated"`
	DuplicatedAll int `json:"duplicated_all"`
	// Unexpected fires of the window reached an executor but were not
	// expected (a schedule the tool got wrong, or a fire that should not
	// have happened).
	Unexpected int `json:"unexpected"`
	// PerSecond is received fires of the window per second of it;
	// ArrivedPerSecond is runs that reached a handler during the window per
	// second, whatever their instant.
	PerSecond        float64 `json:"per_s"`
	ArrivedPerSecond float64 `json:"arrived_per_s"`
}

// failoverInfo is what --chaos observed.
type failoverInfo struct {
	Kills int `json:"kills"`
	// Exits are admins that exited by themselves (lease lost) and were
	// started again.
	Exits int `json:"exits"`
	// KillsAt are the kills' times, RFC 3339 with milliseconds.
	KillsAt []string `json:"kills_at"`
	// Gaps are, per kill, how late the latest fire due in its failover
	// window (a second before it to three after) reached an executor, ms.
	Gaps []float64 `json:"gaps_ms"`
	// Outside is the lateness of the window's fires due outside every
	// failover window; Fires how many those are.
	Outside latenessInfo `json:"lateness_outside_ms"`
	Fires   int          `json:"fires_outside"`
}

// Failover windows: the fires due from failoverBefore before a kill to
// failoverAfter after it (the dead admin's lease runs out within 1 s,
// another adopts its claims within 200 ms and sends them).
const (
	failoverBefore = time.Second
	failoverAfter  = 3 * time.Second
)

// burstMin is the fewest fires due on one instant that make it a burst in
// result.Bursts.
const burstMin = 100

// burstInfo is the lateness of the fires of one instant.
type burstInfo struct {
	At       string  `json:"at"`
	Fires    int     `json:"fires"`
	P50      float64 `json:"p50"`
	P99      float64 `json:"p99"`
	Max      float64 `json:"max"`
	Earliest float64 `json:"earliest"` // the first handler's start
}

// bursts returns the lateness of each instant with at least burstMin
// fires, from late by instant (unix milliseconds), in order.
func bursts(byInstant map[int64][]float64) []burstInfo {
	var out []burstInfo
	for _, at := range slices.Sorted(maps.Keys(byInstant)) {
		xs := byInstant[at]
		if len(xs) < burstMin {
			continue
		}
		slices.Sort(xs)
		out = append(out, burstInfo{At: time.UnixMilli(at).UTC().Format("15:04:05.000"), Fires: len(xs),
			P50: round(pct(xs, 0.5)), P99: round(pct(xs, 0.99)), Max: round(xs[len(xs)-1]), Earliest: round(xs[0])})
	}
	return out
}

type latenessInfo struct {
	P50  float64 `json:"p50"`
	P90  float64 `json:"p90"`
	P99  float64 `json:"p99"`
	P999 float64 `json:"p999"`
	Max  float64 `json:"max"`
	Mean float64 `json:"mean"`
}

type runInfo struct {
	// CompletedPerSecond is the change of the dashboard's succeeded plus
	// failed counts over the window, per second: results recorded.
	CompletedPerSecond float64 `json:"completed_per_s"`
	Succeeded          int64   `json:"succeeded"`
	Failed             int64   `json:"failed"`
	Error              string  `json:"error,omitempty"`
}

type resourceInfo struct {
	// AdminCPU is the admin's CPU over the window in percent of one core,
	// of all the started admins together with --admins (summed);
	// ToolCPU this process's (executors and load tool). -1: unknown.
	AdminCPU float64 `json:"admin_cpu_pct"`
	ToolCPU  float64 `json:"tool_cpu_pct"`
	// AdminCPUEach is each started admin's, with --admins over 1, in
	// their order (an admin killed by --chaos: -1). Admins over
	// PostgreSQL share the fires as far as their load needs: one that
	// stands by shows as a percent or two.
	AdminCPUEach []float64 `json:"admin_cpu_pct_each,omitempty"`
	// RSS is the admin's resident memory at the end of the window, MaxRSS
	// the largest sampled each second during it, PeakRSS its VmHWM (the
	// peak since it started, set-up included); bytes.
	RSS     int64 `json:"admin_rss_bytes"`
	MaxRSS  int64 `json:"admin_max_rss_window_bytes"`
	PeakRSS int64 `json:"admin_peak_rss_bytes"`
	DBBytes int64 `json:"db_bytes"`
}

type sparseInfo struct {
	Jobs int `json:"jobs"`
	// Fired is the sparse jobs' fires that reached the executor during the
	// window.
	Fired int `json:"fired_in_window"`
}

// fill computes the figures from the observations.
func (r *result) fill(c *config, w *window) {
	r.Window = windowInfo{Start: w.start.Format(time.RFC3339), End: w.end.Format(time.RFC3339)}
	start, end := w.start.UnixMilli(), w.end.UnixMilli()
	secs := w.end.Sub(w.start).Seconds()
	seen := map[fireKey]int{}
	all := map[fireKey]int{}
	var late []float64
	byInstant := map[int64][]float64{}
	arrived := 0
	for _, rc := range w.receipts {
		k := fireKey{rc.job, rc.at}
		all[k]++
		if rc.got >= w.start.UnixNano() && rc.got < w.end.UnixNano() {
			arrived++
		}
		if rc.at < start || rc.at >= end {
			continue
		}
		if seen[k]++; seen[k] == 1 {
			ms := float64(rc.got-rc.at*int64(time.Millisecond)) / float64(time.Millisecond)
			late = append(late, ms)
			byInstant[rc.at] = append(byInstant[rc.at], ms)
		}
	}
	f := &r.Fires
	f.Expected = len(w.expected)
	for k, n := range seen {
		f.Duplicated += n - 1
		if w.expected[k] {
			f.Received++
		} else {
			f.Unexpected++
		}
	}
	for _, n := range all {
		f.DuplicatedAll += n - 1
	}
	f.Missed = f.Expected - f.Received
	if w.misfires != nil {
		rec, neither := 0, 0
		for k := range w.expected {
			if seen[k] > 0 {
				continue
			}
			if recorded(w.misfires, k) {
				rec++
				continue
			}
			neither++
			if w.stored != nil {
				if f.NeitherAs == nil {
					f.NeitherAs = map[string]int{}
				}
				as := "none"
				if st, ok := w.stored[k]; ok {
					as = strings.TrimPrefix(st.String(), "RUN_STATUS_")
				}
				f.NeitherAs[as]++
			}
		}
		f.MissedRecorded, f.Neither = &rec, &neither
	}
	f.PerSecond = float64(len(seen)) / secs
	f.ArrivedPerSecond = float64(arrived) / secs

	slices.Sort(late)
	r.Lateness = quantiles(late)
	r.Bursts = bursts(byInstant)
	if len(w.claimed) > 0 {
		q := quantiles(w.claimed)
		r.Claimed = &q
	}

	if a, b := w.done[0], w.done[1]; a.err == nil && b.err == nil {
		r.Runs.Succeeded, r.Runs.Failed = b.succeeded-a.succeeded, b.failed-a.failed
		r.Runs.CompletedPerSecond = float64(r.Runs.Succeeded+r.Runs.Failed) / b.at.Sub(a.at).Seconds()
	} else {
		r.Runs.Error = fmt.Sprint(cmpErr(a.err, b.err))
	}
	r.Resources = resourceInfo{
		AdminCPU: round(cpuPercent(w.admin[0], w.admin[1])), ToolCPU: round(cpuPercent(w.self[0], w.self[1])),
		AdminCPUEach: cpuEach(w.each[0], w.each[1]),
		RSS:          w.rss, MaxRSS: w.maxRSS, PeakRSS: w.peakRSS,
	}
	if c.sparse > 0 {
		n := 0
		for _, rc := range w.sparseReceipts {
			if rc.got >= w.start.UnixNano() && rc.got < w.end.UnixNano() {
				n++
			}
		}
		r.Sparse = &sparseInfo{Jobs: c.sparse, Fired: n}
	}
	r.PerfTop = w.perfTop
	if c.chaosMin > 0 {
		r.Failover = failover(w)
	}
}

// failover computes the figures of --chaos from the first receipt of each
// fire of the window.
func failover(w *window) *failoverInfo {
	fo := &failoverInfo{Kills: len(w.kills), Exits: w.exits, Gaps: make([]float64, len(w.kills))}
	for _, k := range w.kills {
		fo.KillsAt = append(fo.KillsAt, k.Format("2006-01-02T15:04:05.000Z07:00"))
	}
	first := map[fireKey]receipt{}
	for _, rc := range w.receipts {
		k := fireKey{rc.job, rc.at}
		if rc.at < w.start.UnixMilli() || rc.at >= w.end.UnixMilli() {
			continue
		}
		if _, ok := first[k]; !ok {
			first[k] = rc
		}
	}
	var outside []float64
	for _, rc := range first {
		late := float64(rc.got-rc.at*int64(time.Millisecond)) / float64(time.Millisecond)
		in := false
		for i, k := range w.kills {
			if rc.at >= k.Add(-failoverBefore).UnixMilli() && rc.at <= k.Add(failoverAfter).UnixMilli() {
				in = true
				fo.Gaps[i] = max(fo.Gaps[i], round(late))
			}
		}
		if !in {
			outside = append(outside, late)
		}
	}
	slices.Sort(outside)
	fo.Outside, fo.Fires = quantiles(outside), len(outside)
	return fo
}

// quantiles summarizes sorted xs.
func quantiles(xs []float64) latenessInfo {
	l := latenessInfo{P50: pct(xs, 0.5), P90: pct(xs, 0.9), P99: pct(xs, 0.99), P999: pct(xs, 0.999), Max: pct(xs, 1)}
	for _, x := range xs {
		l.Mean += x / float64(len(xs))
	}
	l.Mean = round(l.Mean)
	return l
}

func cmpErr(a, b error) error {
	if a != nil {
		return a
	}
	return b
}

// pct is the q-quantile of sorted xs (nearest rank); 0 when empty.
func pct(xs []float64, q float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	i := int(math.Ceil(q*float64(len(xs)))) - 1
	return round(xs[min(max(i, 0), len(xs)-1)])
}

func round(x float64) float64 { return math.Round(x*100) / 100 }

// print writes r as JSON or as a summary.
func (r *result) print(w io.Writer, asJSON bool) error {
	if asJSON {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(r)
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	line := func(name, format string, args ...any) {
		fmt.Fprintf(tw, "%s\t"+format+"\n", append([]any{name}, args...)...)
	}
	s := r.Setup
	line("machine", "%d CPUs, %s, %s", r.Machine.CPUs, r.Machine.Model, r.Machine.Go)
	if s.Admins > 0 {
		line("admins", "%d over %s", s.Admins, s.Database)
	}
	if s.Jobs > 0 {
		line("load", "%d jobs (%s, %s) on %d executors", s.Jobs, s.Schedule, strings.TrimPrefix(s.Route, "ROUTE_STRATEGY_"), s.Executors)
	}
	if s.Sparse > 0 {
		line("sparse", "%d jobs with %s crons, on 1 executor", s.Sparse, map[bool]string{false: "daily", true: "yearly"}[s.SparseYearly])
	}
	line("window", "%s to %s (%gs after a %gs warm-up); admin log level %s", r.Window.Start, r.Window.End, s.Duration, s.Warmup, s.LogLevel)
	if s.ExecutorDir != "" {
		line("executor logs", "under %s", s.ExecutorDir)
	}
	if s.Jobs > 0 {
		f := r.Fires
		line("fires", "%.1f/s (%d of %d expected); arrived %.1f/s", f.PerSecond, f.Received, f.Expected, f.ArrivedPerSecond)
		if f.MissedRecorded != nil {
			line("missed", "%d: %d recorded as misfires, %d neither run nor recorded%s", f.Missed, *f.MissedRecorded, *f.Neither, neitherAs(f.NeitherAs))
		} else {
			line("missed", "%d", f.Missed)
		}
		line("duplicated", "%d (whole test: %d); unexpected %d", f.Duplicated, f.DuplicatedAll, f.Unexpected)
		l := r.Lateness
		line("lateness", "p50 %.2f ms, p90 %.2f ms, p99 %.2f ms, p99.9 %.2f ms, max %.2f ms", l.P50, l.P90, l.P99, l.P999, l.Max)
		if l := r.Claimed; l != nil {
			line("claimed", "p50 %.0f ms, p90 %.0f ms, p99 %.0f ms, p99.9 %.0f ms, max %.0f ms (the admin's share: runs.triggered_at)", l.P50, l.P90, l.P99, l.P999, l.Max)
		}
	}
	if fo := r.Failover; fo != nil {
		line("kills", "%d (SIGKILL of a random admin, started again at once); %d admins exited by themselves", fo.Kills, fo.Exits)
		line("failover gaps", "%v ms: per kill, the latest fire due from %s before to %s after it", fo.Gaps, failoverBefore, failoverAfter)
		l := fo.Outside
		line("lateness outside", "p50 %.2f ms, p90 %.2f ms, p99 %.2f ms, p99.9 %.2f ms, max %.2f ms (%d fires due outside every failover window)",
			l.P50, l.P90, l.P99, l.P999, l.Max, fo.Fires)
	}
	if r.Runs.Error != "" {
		line("completed runs", "unknown: %s", r.Runs.Error)
	} else {
		line("completed runs", "%.1f/s (%d succeeded, %d failed)", r.Runs.CompletedPerSecond, r.Runs.Succeeded, r.Runs.Failed)
	}
	if rd := r.Readers; rd != nil {
		for _, m := range []string{"ListRuns", "GetDashboard"} {
			x := rd.Methods[m]
			line("readers: "+m, "%.1f/s by %d clients; p50 %.1f ms, p90 %.1f ms, p99 %.1f ms, max %.1f ms",
				x.PerSecond, rd.Clients, x.Latency.P50, x.Latency.P90, x.Latency.P99, x.Latency.Max)
		}
		if len(rd.Errors) > 0 {
			line("readers: errors", "%v", rd.Errors)
		}
	}
	if r.Sparse != nil {
		line("sparse fires", "%d in the window", r.Sparse.Fired)
	}
	if wf := r.Workflows; wf != nil {
		line("workflows", "%d of %d nodes: %d of %d runs complete (%.1f/min), %d node runs missing, %d duplicated",
			wf.Workflows, wf.Nodes, wf.Complete, wf.Expected, wf.PerMinute, wf.NodeRunsMissing, wf.NodeRunsDuplicated)
		line("workflows: roots", "late p50 %.1f ms, p99 %.1f ms, max %.1f ms", wf.RootLateness.P50, wf.RootLateness.P99, wf.RootLateness.Max)
		line("workflows: node start", "after the last dependency ended: p50 %.1f ms, p99 %.1f ms, max %.1f ms (%d nodes)",
			wf.NodeStart.P50, wf.NodeStart.P99, wf.NodeStart.Max, wf.NodeStarts)
	}
	x := r.Resources
	each := ""
	if len(x.AdminCPUEach) > 0 {
		parts := make([]string, len(x.AdminCPUEach))
		for i, c := range x.AdminCPUEach {
			parts[i] = percent(c)
		}
		each = "; each: " + strings.Join(parts, ", ")
	}
	line("admin CPU", "%s of one core, the started admins together%s (executors and this tool: %s)", percent(x.AdminCPU), each, percent(x.ToolCPU))
	line("admin memory", "%s resident at the end, %s at most in the window, %s peak (VmHWM)", mib(x.RSS), mib(x.MaxRSS), mib(x.PeakRSS))
	line("database", "%s", mib(x.DBBytes))
	var setup []string
	for _, p := range []struct {
		name string
		s    float64
	}{{"sparse insert", s.SparseInsertSeconds}, {"history insert", s.HistoryInsertSeconds}, {"admin start", s.AdminStartSeconds}, {"job creation", s.CreateJobsSeconds}} {
		if p.s > 0 {
			setup = append(setup, fmt.Sprintf("%s %.1fs", p.name, p.s))
		}
	}
	if len(setup) > 0 {
		line("set-up", "%s", strings.Join(setup, ", "))
	}
	if r.PerfTop != "" {
		line("perf top", "%s", strings.ReplaceAll(r.PerfTop, "\n", "\n\t"))
	}
	return tw.Flush()
}

func percent(p float64) string {
	if p < 0 {
		return "unknown"
	}
	return fmt.Sprintf("%.1f %%", p)
}

func mib(b int64) string {
	if b == 0 {
		return "unknown"
	}
	return fmt.Sprintf("%.1f MiB", float64(b)/(1<<20))
}

// neitherAs writes the runs of the fires neither run nor recorded by
// status, " (FAILED 12, none 3)", or "" when there are none.
func neitherAs(by map[string]int) string {
	if len(by) == 0 {
		return ""
	}
	var parts []string
	for _, st := range slices.Sorted(maps.Keys(by)) {
		parts = append(parts, fmt.Sprintf("%s %d", st, by[st]))
	}
	return " (their runs: " + strings.Join(parts, ", ") + ")"
}
