package sdk

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"slices"
	"strings"
)

// A script's context between workflow nodes. A script gets its run's
// [Job.Inputs] twice:
//
//   - as environment variables CARILLON_INPUT_<KEY>, KEY upper-cased with
//     every character but A-Z, 0-9 and _ made _ (of two keys that become
//     the same name, the later in key order wins), while they add up to at
//     most maxInputsEnv bytes;
//   - all of them, always, as a JSON object of strings in the file named
//     by CARILLON_INPUTS_FILE ({} when none).
//
// It publishes outputs ([Job.SetOutput]) by writing key=value lines to the
// file named by CARILLON_OUTPUTS_FILE, read once the script exited with
// status 0 (outputs over MaxOutputsSize then fail the run): the
// value is what follows the first =, a line without one or with an empty
// key is skipped, and a key set twice keeps its last value.

// maxInputsEnv bounds the bytes of the CARILLON_INPUT_ variables, well
// within what exec allows an environment.
const maxInputsEnv = 128 << 10

// scriptFiles are the context files of one script run.
type scriptFiles struct {
	inputs, outputs string
}

// writeScriptFiles writes the context files of job's script run, their
// paths starting with prefix, and returns them and the environment
// variables that name them and hold its inputs.
func writeScriptFiles(prefix string, job *Job) (scriptFiles, []string, error) {
	b, err := json.Marshal(job.Inputs)
	if err != nil {
		return scriptFiles{}, nil, err
	}
	if job.Inputs == nil {
		b = []byte("{}")
	}
	files := scriptFiles{inputs: prefix + "inputs.json", outputs: prefix + "outputs"}
	if err := os.WriteFile(files.inputs, b, 0o600); err != nil {
		return scriptFiles{}, nil, err
	}
	if err := os.WriteFile(files.outputs, nil, 0o600); err != nil {
		files.remove()
		return scriptFiles{}, nil, err
	}
	env := []string{"CARILLON_INPUTS_FILE=" + files.inputs, "CARILLON_OUTPUTS_FILE=" + files.outputs}
	size := 0
	for _, k := range slices.Sorted(maps.Keys(job.Inputs)) {
		v := "CARILLON_INPUT_" + envName(k) + "=" + job.Inputs[k]
		if size += len(v); size > maxInputsEnv {
			break
		}
		env = append(env, v)
	}
	return files, env, nil
}

// envName is key as the name of an environment variable: upper-cased,
// every character but A-Z, 0-9 and _ made _.
func envName(key string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z':
			return r - 'a' + 'A'
		case r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '_':
			return r
		}
		return '_'
	}, key)
}

// readOutputs publishes the key=value lines the script wrote to its
// outputs file as job's outputs.
func (f scriptFiles) readOutputs(job *Job) error {
	file, err := os.Open(f.outputs)
	if err != nil {
		return err
	}
	defer func() { _ = file.Close() }()
	sc := bufio.NewScanner(file)
	sc.Buffer(nil, MaxOutputsSize+1<<10)
	for sc.Scan() {
		k, v, ok := strings.Cut(strings.TrimSuffix(sc.Text(), "\r"), "=")
		if !ok || k == "" {
			continue
		}
		if err := job.SetOutput(strings.ToValidUTF8(k, "\uFFFD"), strings.ToValidUTF8(v, "\uFFFD")); err != nil {
			return err
		}
	}
	if err := sc.Err(); errors.Is(err, bufio.ErrTooLong) {
		return fmt.Errorf("%w: a line of CARILLON_OUTPUTS_FILE is longer than %d bytes", ErrOutputsTooLarge, MaxOutputsSize)
	} else if err != nil {
		return err
	}
	return nil
}

// remove deletes the files.
func (f scriptFiles) remove() {
	_ = os.Remove(f.inputs)
	_ = os.Remove(f.outputs)
}
