package workflow

// State is where a node of a workflow run is.
type State int

const (
	// Waiting is a node not started: its dependencies have not all
	// succeeded yet.
	Waiting State = iota
	// Running is a node started: its run is pending, running or being
	// retried.
	Running
	// Succeeded is a node whose run succeeded (every shard of it).
	Succeeded
	// Failed is a node whose run ended otherwise, after its job's retries.
	Failed
	// Skipped is a node that will not run: a node it depends on failed or
	// was skipped, or the workflow run was cancelled.
	Skipped
)

// Step is what follows a change of a workflow run's nodes.
type Step struct {
	// Start are the indexes of the waiting nodes whose dependencies all
	// succeeded, in the nodes' order.
	Start []int
	// Skip are the waiting nodes that will never run, by index, each with
	// the key of the upstream node that failed (or was skipped) first.
	Skip map[int]string
	// Done says nothing more runs or can run: the workflow run ends,
	// succeeded if Succeeded.
	Done      bool
	Succeeded bool
}

// Next returns what follows the nodes being in states (by index): the
// waiting nodes to start and those to skip, and whether the workflow run
// ends. Skipping reaches every node downstream of a failure at once; the
// branches that do not depend on it go on. nodes must have passed Check.
func Next(nodes []Node, states []State) Step {
	index := make(map[string]int, len(nodes))
	for i, n := range nodes {
		index[n.Key] = i
	}
	st := append([]State(nil), states...)
	var out Step
	for changed := true; changed; {
		changed = false
		for i, n := range nodes {
			if st[i] != Waiting {
				continue
			}
			ready, upstream := true, ""
			for _, d := range n.DependsOn {
				switch st[index[d]] {
				case Failed, Skipped:
					if upstream == "" {
						upstream = d
					}
				case Succeeded:
				default:
					ready = false
				}
			}
			switch {
			case upstream != "":
				if out.Skip == nil {
					out.Skip = map[int]string{}
				}
				out.Skip[i], st[i], changed = upstream, Skipped, true
			case ready:
				out.Start, st[i] = append(out.Start, i), Running
			}
		}
	}
	out.Done, out.Succeeded = true, true
	for _, s := range st {
		switch s {
		case Waiting, Running:
			out.Done, out.Succeeded = false, false
			return out
		case Failed, Skipped:
			out.Succeeded = false
		}
	}
	return out
}
