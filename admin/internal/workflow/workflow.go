// Package workflow is the policy of workflow runs: whether a workflow's
// nodes form a DAG (Check), and, as a workflow run's nodes settle, which
// nodes start, which are skipped because a node they depend on failed,
// and when the workflow run ends and how (Next). It is pure, as package
// followup is: the store carries out its Step in the transaction that
// settles a node's run, so that a crash never keeps one without the other.
package workflow

import (
	"errors"
	"fmt"
	"regexp"
	"strings"
)

// MaxNodes is the most nodes a workflow has.
const MaxNodes = 1000

// Node is what the policy reads of a workflow node: its key and the keys
// of the nodes it depends on.
type Node struct {
	Key       string
	DependsOn []string
}

// NodeError says which node of a workflow is wrong and why.
type NodeError struct {
	// Index is the node's position in the workflow's nodes.
	Index int
	// Key is the node's key, as given.
	Key string
	// Field is the node's field at fault: "key" or "depends_on".
	Field string
	Err   error
}

func (e *NodeError) Error() string {
	return fmt.Sprintf("nodes[%d] (%q).%s: %v", e.Index, e.Key, e.Field, e.Err)
}

// Unwrap returns e.Err.
func (e *NodeError) Unwrap() error { return e.Err }

// ErrCycle is the error of a node that depends on itself, directly or
// through others.
var ErrCycle = errors.New("workflow: the dependencies form a cycle")

var keyPattern = regexp.MustCompile(`^[A-Za-z0-9_.-]{1,64}$`)

// Check reports, as a *NodeError, the first thing wrong with nodes: none
// at all, more than MaxNodes, a key that is empty, too long or of other
// characters than letters, digits, '_', '-' and '.', a duplicate key, a
// dependency on an unknown key or twice on one, and a cycle (naming the
// nodes around it).
func Check(nodes []Node) error {
	if len(nodes) == 0 {
		return errors.New("workflow: at least one node is required")
	}
	if len(nodes) > MaxNodes {
		return fmt.Errorf("workflow: at most %d nodes, got %d", MaxNodes, len(nodes))
	}
	index := make(map[string]int, len(nodes))
	for i, n := range nodes {
		if !keyPattern.MatchString(n.Key) {
			return &NodeError{i, n.Key, "key", errors.New("must be 1 to 64 letters, digits, '_', '-' or '.'")}
		}
		if j, dup := index[n.Key]; dup {
			return &NodeError{i, n.Key, "key", fmt.Errorf("duplicate key: nodes[%d] has it too", j)}
		}
		index[n.Key] = i
	}
	for i, n := range nodes {
		seen := make(map[string]bool, len(n.DependsOn))
		for _, d := range n.DependsOn {
			if _, ok := index[d]; !ok {
				return &NodeError{i, n.Key, "depends_on", fmt.Errorf("no node has the key %q", d)}
			}
			if seen[d] {
				return &NodeError{i, n.Key, "depends_on", fmt.Errorf("%q is listed twice", d)}
			}
			seen[d] = true
		}
	}
	return checkCycles(nodes, index)
}

// checkCycles finds a cycle by depth-first search and names its nodes.
func checkCycles(nodes []Node, index map[string]int) error {
	const (
		unseen = iota
		open
		done
	)
	state := make([]int, len(nodes))
	var path []int
	var visit func(i int) error
	visit = func(i int) error {
		state[i] = open
		path = append(path, i)
		for _, d := range nodes[i].DependsOn {
			j := index[d]
			switch state[j] {
			case open:
				start := 0
				for k, p := range path {
					if p == j {
						start = k
					}
				}
				keys := make([]string, 0, len(path)-start+1)
				for _, p := range path[start:] {
					keys = append(keys, nodes[p].Key)
				}
				keys = append(keys, nodes[j].Key)
				return &NodeError{j, nodes[j].Key, "depends_on", fmt.Errorf("%w: %s", ErrCycle, strings.Join(reverse(keys), " -> "))}
			case unseen:
				if err := visit(j); err != nil {
					return err
				}
			}
		}
		path = path[:len(path)-1]
		state[i] = done
		return nil
	}
	for i := range nodes {
		if state[i] == unseen {
			if err := visit(i); err != nil {
				return err
			}
		}
	}
	return nil
}

// reverse returns keys in the reverse order: a path of "depends on" edges
// read as the order the nodes run in.
func reverse(keys []string) []string {
	out := make([]string, len(keys))
	for i, k := range keys {
		out[len(keys)-1-i] = k
	}
	return out
}
