package workflow_test

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/carillonhq/carillon/admin/internal/workflow"
)

func nodes(spec ...string) []workflow.Node {
	var out []workflow.Node
	for _, s := range spec {
		key, deps, _ := strings.Cut(s, ":")
		n := workflow.Node{Key: key}
		if deps != "" {
			n.DependsOn = strings.Split(deps, ",")
		}
		out = append(out, n)
	}
	return out
}

func TestCheck(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name  string
		nodes []workflow.Node
		want  string // a part of the error; "" for none
		index int
	}{
		{"Diamond", nodes("extract", "a:extract", "b:extract", "load:a,b"), "", 0},
		{"Empty", nil, "at least one node", -1},
		{"BadKey", nodes("ok", "not ok"), "must be 1 to 64", 1},
		{"Duplicate", nodes("a", "b", "a"), "duplicate key: nodes[0]", 2},
		{"Unknown", nodes("a", "b:a,c"), `no node has the key "c"`, 1},
		{"Twice", nodes("a", "b:a,a"), "listed twice", 1},
		{"Self", nodes("a:a"), "cycle: a -> a", 0},
		{"Cycle", nodes("x", "a:x,c", "b:a", "c:b"), "cycle", -2},
	} {
		t.Run(tt.name, func(t *testing.T) {
			err := workflow.Check(tt.nodes)
			if tt.want == "" {
				if err != nil {
					t.Fatalf("Check: %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("Check: %v, want it to say %q", err, tt.want)
			}
			var ne *workflow.NodeError
			switch {
			case tt.index == -1:
			case !errors.As(err, &ne):
				t.Fatalf("Check: %v is not a *NodeError", err)
			case tt.index == -2:
				if !errors.Is(err, workflow.ErrCycle) || ne.Key == "x" {
					t.Fatalf("Check: %v, want a cycle of a, b and c", err)
				}
			case ne.Index != tt.index:
				t.Fatalf("Check: %v names nodes[%d], want nodes[%d]", err, ne.Index, tt.index)
			}
		})
	}
}

func TestNext(t *testing.T) {
	t.Parallel()
	const (
		w = workflow.Waiting
		r = workflow.Running
		s = workflow.Succeeded
		f = workflow.Failed
		k = workflow.Skipped
	)
	diamond := nodes("extract", "a:extract", "b:extract", "load:a,b", "other")
	for _, tt := range []struct {
		name     string
		states   []workflow.State
		start    []int
		skip     map[int]string
		done, ok bool
	}{
		{"Roots", []workflow.State{w, w, w, w, w}, []int{0, 4}, nil, false, false},
		{"FanOut", []workflow.State{s, w, w, w, r}, []int{1, 2}, nil, false, false},
		{"FanInWaitsForBoth", []workflow.State{s, s, r, w, s}, nil, nil, false, false},
		{"FanIn", []workflow.State{s, s, s, w, s}, []int{3}, nil, false, false},
		{"AllSucceeded", []workflow.State{s, s, s, s, s}, nil, nil, true, true},
		{"BranchFailsOtherGoesOn", []workflow.State{s, f, r, w, r}, nil, map[int]string{3: "a"}, false, false},
		{"FailedWhenNothingRuns", []workflow.State{s, f, s, w, s}, nil, map[int]string{3: "a"}, true, false},
		{"RootFailsSkipsAllBelow", []workflow.State{f, w, w, w, s}, nil, map[int]string{1: "extract", 2: "extract", 3: "a"}, true, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got := workflow.Next(diamond, tt.states)
			if !slices.Equal(got.Start, tt.start) {
				t.Errorf("Start %v, want %v", got.Start, tt.start)
			}
			if len(got.Skip) != len(tt.skip) {
				t.Errorf("Skip %v, want %v", got.Skip, tt.skip)
			}
			for i, up := range tt.skip {
				if got.Skip[i] != up {
					t.Errorf("Skip %v, want %v", got.Skip, tt.skip)
				}
			}
			if got.Done != tt.done || got.Succeeded != tt.ok {
				t.Errorf("Done %v Succeeded %v, want %v %v", got.Done, got.Succeeded, tt.done, tt.ok)
			}
		})
	}
}
