package metrics

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"

	carillonv1 "github.com/carillonhq/carillon/proto/carillon/v1"
)

// workflows is the instruments of workflow runs.
type workflows struct {
	runs     *prometheus.CounterVec
	nodeWait prometheus.Histogram
}

func newWorkflows(reg *prometheus.Registry) workflows {
	w := workflows{
		runs: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: Namespace, Name: "workflow_runs_total",
			Help: "Workflow runs ended, by final status (succeeded, failed, cancelled, skipped)."}, []string{"status"}),
		nodeWait: prometheus.NewHistogram(prometheus.HistogramOpts{Namespace: Namespace, Name: "workflow_node_wait_seconds",
			Help: "How long a workflow node's run waited to be claimed for dispatch: from its last dependency's end " +
				"(a root node: its workflow run's start) to the scheduler's claim of its first attempt.",
			Buckets: latenessBuckets}),
	}
	reg.MustRegister(w.runs, w.nodeWait)
	for _, s := range []carillonv1.WorkflowRunStatus{carillonv1.WorkflowRunStatus_WORKFLOW_RUN_STATUS_SUCCEEDED,
		carillonv1.WorkflowRunStatus_WORKFLOW_RUN_STATUS_FAILED, carillonv1.WorkflowRunStatus_WORKFLOW_RUN_STATUS_CANCELLED,
		carillonv1.WorkflowRunStatus_WORKFLOW_RUN_STATUS_SKIPPED} {
		w.runs.WithLabelValues(workflowStatusLabel(s))
	}
	return w
}

// WorkflowRunEnded counts a workflow run that ended with status s.
func (m *Metrics) WorkflowRunEnded(s carillonv1.WorkflowRunStatus) {
	if m == nil {
		return
	}
	m.workflows.runs.WithLabelValues(workflowStatusLabel(s)).Inc()
}

// NodeClaimed observes the wait of a workflow node's run claimed at
// claimed, due at due (its last dependency's end).
func (m *Metrics) NodeClaimed(due, claimed time.Time) {
	if m == nil {
		return
	}
	m.workflows.nodeWait.Observe(max(claimed.Sub(due), 0).Seconds())
}

func workflowStatusLabel(s carillonv1.WorkflowRunStatus) string {
	return label(s.String(), "WORKFLOW_RUN_STATUS_")
}
