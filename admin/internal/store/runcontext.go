package store

import (
	"database/sql"
	"encoding/json"
	"maps"
	"slices"

	carillonv1 "github.com/carillonhq/carillon/proto/carillon/v1"
)

// Context between workflow nodes (issue 33): a run's handler publishes
// outputs with its result (Run.Outputs); the runs of a node are made with
// the merged outputs of its dependencies as their inputs (Run.Inputs).
// Both are stored as JSON objects of strings, NULL when empty.

// MaxOutputsSize is the most bytes of keys and values together that one
// run may publish (OutputsSize).
const MaxOutputsSize = 64 << 10

// OutputsSize is the size of outputs as MaxOutputsSize counts it: the
// bytes of its keys and values.
func OutputsSize(outputs map[string]string) int {
	n := 0
	for k, v := range outputs {
		n += len(k) + len(v)
	}
	return n
}

// encodeContext is m as its column stores it: a JSON object, or NULL
// when m is empty.
func encodeContext(m map[string]string) sql.NullString {
	if len(m) == 0 {
		return sql.NullString{}
	}
	b, _ := json.Marshal(m) // a map of strings always marshals
	return sql.NullString{String: string(b), Valid: true}
}

// decodeContext reads a column that encodeContext wrote.
func decodeContext(s sql.NullString) (map[string]string, error) {
	if !s.Valid || s.String == "" {
		return nil, nil
	}
	var m map[string]string
	if err := json.Unmarshal([]byte(s.String), &m); err != nil {
		return nil, err
	}
	return m, nil
}

// nodeInputs returns the inputs of node i of workflow run wr: the outputs
// of the latest attempt of each of its dependencies (all of which
// succeeded), merged in the order of its DependsOn. A key of a later
// dependency replaces an earlier one's, and within a sharded dependency a
// later shard's an earlier one's. Nil when they published nothing.
func (st *settler) nodeInputs(wr *WorkflowRun, i int) (map[string]string, error) {
	deps := wr.Nodes[i].DependsOn
	if len(deps) == 0 {
		return nil, nil
	}
	first := make(map[string]int64, len(deps)) // each dependency's first run of its attempt
	for _, n := range wr.Nodes {
		if slices.Contains(deps, n.Key) {
			first[n.Key] = n.FirstRunID
		}
	}
	rows, err := st.tx.QueryContext(st.ctx, nodeOutputsSQL,
		wr.ID, carillonv1.RunStatus_RUN_STATUS_SUCCEEDED)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	published := map[string][]map[string]string{} // by node, in shard order
	for rows.Next() {
		var node string
		var id int64
		var outputs sql.NullString
		if err := rows.Scan(&node, &id, &outputs); err != nil {
			return nil, err
		}
		if f, ok := first[node]; !ok || id < f {
			continue // not a dependency, or an earlier attempt's
		}
		m, err := decodeContext(outputs)
		if err != nil {
			return nil, err
		}
		published[node] = append(published[node], m)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	var inputs map[string]string
	for _, dep := range deps {
		for _, m := range published[dep] {
			if inputs == nil {
				inputs = map[string]string{}
			}
			maps.Copy(inputs, m)
		}
	}
	return inputs, nil
}
