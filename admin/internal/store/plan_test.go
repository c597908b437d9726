package store

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
)

// TestQueryPlans: the queries that run every few seconds whatever the
// load (the monitor's, the alarms', recovery's, the scan's next fire), and
// those of each workflow node started, read
// through a partial index, never by scanning a table: the runs table
// holds every run kept, millions of rows, and jobs a million.
func TestQueryPlans(t *testing.T) {
	t.Parallel()
	s, err := Open(context.Background(), filepath.Join(t.TempDir(), "carillon.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for name, q := range map[string]string{
		"LostRuns": lostRunsSQL, "OverdueRuns": overdueRunsSQL, "UndispatchedRuns": undispatchedRunsSQL,
		"UnsentRuns": unsentRunsSQL(sqliteDialect{}), "UnsentRunIDs": unsentRunIDsSQL, "RunsAt": runsAtSQL, "ManualRuns": manualRunsSQL,
		"PendingRuns": pendingRunsSQL, "PendingAlarms": pendingAlarmsSQL, "NextFireAt": nextFireSQL, "CountDue": countDueSQL,
		"NodeOutputs": nodeOutputsSQL, "NodeShards": nodeShardsSQL,
	} {
		// The partial indexes hold only the runs in flight or with an
		// alarm due, so even a scan of one of them is small.
		text := queryPlan(t, s, q)
		if !strings.Contains(text, "USING INDEX runs_active") && !strings.Contains(text, "USING INDEX runs_alarm") &&
			!strings.Contains(text, "USING COVERING INDEX jobs_due") && !strings.Contains(text, "USING INDEX runs_workflow") {
			t.Errorf("%s: plan %q, want it read through runs_active, runs_alarm, runs_workflow or jobs_due", name, text)
		}
	}
	// A late result's retry, by its job's runs after its own: not by
	// scheduled_at, which a minute mark's million runs share.
	for name, q := range map[string]string{"DropRetry": dropRetrySQL, "FixDelayNext": fixDelayNextSQL} {
		if text := queryPlan(t, s, q); !strings.Contains(text, "USING INDEX runs_job (job_id=? AND id>?)") {
			t.Errorf("%s: plan %q, want the runs read through runs_job from the run on", name, text)
		}
	}
}

// queryPlan returns SQLite's plan of q, its steps joined by "; ".
func queryPlan(t *testing.T, s *Store, q string) string {
	t.Helper()
	rows, err := s.r.Query("EXPLAIN QUERY PLAN "+q, make([]any, placeholderCount(t, q))...)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var plan []string
	for rows.Next() {
		var id, parent, unused int
		var detail string
		if err := rows.Scan(&id, &parent, &unused, &detail); err != nil {
			t.Fatal(err)
		}
		plan = append(plan, detail)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return strings.Join(plan, "; ")
}
