package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"

	carillonv1 "github.com/carillonhq/carillon/proto/carillon/v1"
)

// applyRefKeys are the keys of a job in an apply file that are not Job
// fields but ApplyJob's: its group and the names of its child jobs and
// calendars (either spelling).
var applyRefKeys = map[string]string{
	"group": "group", "childJobs": "childJobs", "child_jobs": "childJobs", "calendars": "calendars",
}

// readApplyFiles reads the definitions of a file, or of the .yaml, .yml
// and .json files under a directory, into one request.
func (e *cmdEnv) readApplyFiles(name string) (*carillonv1.ApplyRequest, error) {
	if name == "" {
		return nil, usagef("give the definitions: -f FILE.yaml or -f DIR")
	}
	root := e.proc.path(name)
	info, err := os.Stat(root)
	if err != nil {
		return nil, usagef("-f: %v", err)
	}
	files := []string{root}
	if info.IsDir() {
		files = nil
		err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if ext := filepath.Ext(p); !d.IsDir() && (ext == ".yaml" || ext == ".yml" || ext == ".json") {
				files = append(files, p)
			}
			return nil
		})
		if err != nil {
			return nil, usagef("-f: %v", err)
		}
		if len(files) == 0 {
			return nil, usagef("-f %s: no .yaml, .yml or .json file in it", name)
		}
	}
	req := &carillonv1.ApplyRequest{}
	for _, f := range files {
		data, err := os.ReadFile(f) //nolint:gosec // the user's own file, named by -f
		if err != nil {
			return nil, usagef("-f: %v", err)
		}
		if err := addApplyFile(req, f, data); err != nil {
			return nil, usageError{err}
		}
	}
	return req, nil
}

// addApplyFile adds the definitions of one file (each of its YAML
// documents) to req; its errors name the file and where in it.
func addApplyFile(req *carillonv1.ApplyRequest, file string, data []byte) error {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	for {
		var doc any
		err := dec.Decode(&doc)
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("%s: not YAML: %w", file, err)
		}
		if doc == nil {
			continue
		}
		top, ok := doc.(map[string]any)
		if !ok {
			return fmt.Errorf("%s: want a mapping with groups:, jobs: and calendars:, got %T", file, doc)
		}
		for key, v := range top {
			if key != "groups" && key != "jobs" && key != "workflows" && key != "calendars" {
				return fmt.Errorf("%s: unknown key %q: want groups, jobs, workflows or calendars", file, key)
			}
			list, ok := v.([]any)
			if !ok && v != nil {
				return fmt.Errorf("%s: %s: want a list", file, key)
			}
			for i, item := range list {
				at := fmt.Sprintf("%s: %s[%d]", file, key, i)
				var err error
				switch key {
				case "groups":
					g := &carillonv1.Group{}
					err = decodeInto(item, g)
					req.Groups = append(req.Groups, g)
				case "calendars":
					c := &carillonv1.Calendar{}
					err = decodeInto(item, c)
					req.Calendars = append(req.Calendars, c)
				case "jobs":
					var j *carillonv1.ApplyJob
					j, err = decodeJob(item)
					req.Jobs = append(req.Jobs, j)
				case "workflows":
					var w *carillonv1.ApplyWorkflow
					w, err = decodeWorkflow(item)
					req.Workflows = append(req.Workflows, w)
				}
				if err != nil {
					return fmt.Errorf("%s: %w", at, err)
				}
			}
		}
	}
}

// decodeJob decodes a job of an apply file: its reference keys into the
// ApplyJob, the rest into its Job.
func decodeJob(item any) (*carillonv1.ApplyJob, error) {
	m, ok := item.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("want a mapping, got %T", item)
	}
	refs := map[string]any{}
	rest := map[string]any{}
	for k, v := range m {
		if ref, ok := applyRefKeys[k]; ok {
			refs[ref] = v
		} else {
			rest[k] = v
		}
	}
	j := &carillonv1.ApplyJob{}
	if err := decodeInto(refs, j); err != nil {
		return nil, err
	}
	j.Job = &carillonv1.Job{}
	return j, decodeInto(rest, j.Job)
}

// decodeWorkflow decodes a workflow of an apply file: its group and each
// node's job (by name) into the ApplyWorkflow, the rest into its Workflow.
func decodeWorkflow(item any) (*carillonv1.ApplyWorkflow, error) {
	m, ok := item.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("want a mapping, got %T", item)
	}
	out := &carillonv1.ApplyWorkflow{}
	rest := map[string]any{}
	for k, v := range m {
		switch k {
		case "group":
			g, ok := v.(string)
			if !ok {
				return nil, fmt.Errorf("group: want an app name, got %v", v)
			}
			out.Group = g
		case "nodes":
			nodes, ok := v.([]any)
			if !ok {
				return nil, fmt.Errorf("nodes: want a list")
			}
			plain := make([]any, len(nodes))
			for i, n := range nodes {
				nm, ok := n.(map[string]any)
				if !ok {
					return nil, fmt.Errorf("nodes[%d]: want a mapping", i)
				}
				job, ok := nm["job"].(string)
				if !ok || job == "" {
					return nil, fmt.Errorf("nodes[%d].job: required: the name of the node's job (\"app/name\" in another group)", i)
				}
				out.NodeJobs = append(out.NodeJobs, job)
				rest := map[string]any{}
				for nk, nv := range nm {
					if nk != "job" {
						rest[nk] = nv
					}
				}
				plain[i] = rest
			}
			rest[k] = plain
		default:
			rest[k] = v
		}
	}
	out.Workflow = &carillonv1.Workflow{}
	return out, decodeInto(rest, out.Workflow)
}

// protojsonPrefix is what protojson's errors start with: where in the JSON
// text made from the YAML, which says nothing of the file. (protojson puts
// a no-break space instead of a space at random, so that no one matches
// its messages: both are spaces here.)
var protojsonPrefix = regexp.MustCompile(`^proto:[\s\x{00a0}]*(\(line \d+:\d+\):[\s\x{00a0}]*)?`)

// decodeInto decodes a YAML value into m through protobuf's JSON mapping,
// refusing unknown keys.
func decodeInto(v any, m proto.Message) error {
	js, err := json.Marshal(v)
	if err != nil {
		return err
	}
	if err := protojson.Unmarshal(js, m); err != nil {
		return errors.New(protojsonPrefix.ReplaceAllString(err.Error(), ""))
	}
	return nil
}

// exportYAML writes an export as an apply file: calendars, groups, then
// jobs, each job's group first, its keys in the order of the API.
func exportYAML(res *carillonv1.ExportResponse) ([]byte, error) {
	top := &yaml.Node{Kind: yaml.MappingNode}
	add := func(key string, items []*yaml.Node) {
		if len(items) == 0 {
			return
		}
		top.Content = append(top.Content, scalar(key), &yaml.Node{Kind: yaml.SequenceNode, Content: items})
	}
	var cals, groups, jobs []*yaml.Node
	for _, c := range res.Calendars {
		n, err := messageNode(c)
		if err != nil {
			return nil, err
		}
		cals = append(cals, n)
	}
	for _, g := range res.Groups {
		n, err := messageNode(g)
		if err != nil {
			return nil, err
		}
		groups = append(groups, n)
	}
	for _, j := range res.Jobs {
		n, err := messageNode(j.Job)
		if err != nil {
			return nil, err
		}
		refs, err := messageNode(&carillonv1.ApplyJob{ChildJobs: j.ChildJobs, Calendars: j.Calendars})
		if err != nil {
			return nil, err
		}
		// Its identity first: group and name.
		head := []*yaml.Node{scalar("group"), scalar(j.Group)}
		if i := slices.IndexFunc(n.Content, func(k *yaml.Node) bool { return k.Value == "name" }); i >= 0 && i%2 == 0 {
			head = append(head, n.Content[i:i+2]...)
			n.Content = slices.Delete(n.Content, i, i+2)
		}
		n.Content = slices.Concat(head, n.Content, refs.Content)
		jobs = append(jobs, n)
	}
	var workflows []*yaml.Node
	for _, w := range res.Workflows {
		n, err := messageNode(w.Workflow)
		if err != nil {
			return nil, err
		}
		// Each node's job after its key.
		if nodes := mappingValue(n, "nodes"); nodes != nil {
			for i, node := range nodes.Content {
				if i < len(w.NodeJobs) {
					at := min(2, len(node.Content))
					node.Content = slices.Concat(node.Content[:at], []*yaml.Node{scalar("job"), scalar(w.NodeJobs[i])}, node.Content[at:])
				}
			}
		}
		n.Content = slices.Concat([]*yaml.Node{scalar("group"), scalar(w.Group)}, n.Content)
		workflows = append(workflows, n)
	}
	add("calendars", cals)
	add("groups", groups)
	add("jobs", jobs)
	add("workflows", workflows)
	var out bytes.Buffer
	enc := yaml.NewEncoder(&out)
	enc.SetIndent(2)
	if err := enc.Encode(&yaml.Node{Kind: yaml.DocumentNode, Content: []*yaml.Node{top}}); err != nil {
		return nil, err
	}
	return out.Bytes(), enc.Close()
}

// mappingValue is the value of key in mapping n; nil if it has none.
func mappingValue(n *yaml.Node, key string) *yaml.Node {
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key {
			return n.Content[i+1]
		}
	}
	return nil
}

func scalar(s string) *yaml.Node {
	return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: s}
}

// messageNode is m in protobuf's JSON mapping as a YAML mapping, its
// fields in the order protojson writes them, in block style.
func messageNode(m proto.Message) (*yaml.Node, error) {
	js, err := protojson.Marshal(m)
	if err != nil {
		return nil, err
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(js, &doc); err != nil {
		return nil, err
	}
	n := doc.Content[0]
	blockStyle(n)
	return n, nil
}

// blockStyle drops the flow and quoting styles of a node made from JSON,
// so that it encodes as plain YAML (quoted only where a string needs it).
func blockStyle(n *yaml.Node) {
	n.Style = 0
	if n.Kind == yaml.ScalarNode && n.Tag == "!!str" && strings.TrimSpace(n.Value) == "" {
		n.Style = yaml.DoubleQuotedStyle
	}
	for _, c := range n.Content {
		blockStyle(c)
	}
}
