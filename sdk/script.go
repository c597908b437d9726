package sdk

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"time"

	carillonv1 "github.com/carillonhq/carillon/proto/carillon/v1"
)

// interpreter says how to run one type of script: the first command found
// in PATH, and the file name suffix the source is written with.
type interpreter struct {
	commands []string
	suffix   string
}

var interpreters = map[carillonv1.ScriptType]interpreter{
	carillonv1.ScriptType_SCRIPT_TYPE_SHELL:      {[]string{"bash", "sh"}, ".sh"},
	carillonv1.ScriptType_SCRIPT_TYPE_PYTHON:     {[]string{"python3", "python"}, ".py"},
	carillonv1.ScriptType_SCRIPT_TYPE_NODEJS:     {[]string{"node", "nodejs"}, ".js"},
	carillonv1.ScriptType_SCRIPT_TYPE_PHP:        {[]string{"php"}, ".php"},
	carillonv1.ScriptType_SCRIPT_TYPE_POWERSHELL: {[]string{"pwsh", "powershell"}, ".ps1"},
}

// scriptWaitDelay bounds how long a script's Wait may wait for its output
// after its context ended.
const scriptWaitDelay = 2 * time.Second

// scriptHandler runs a script job (xxl-job's GLUE): the admin sends the
// source with the run; it is written to a private temporary file and run as
//
//	<interpreter> <file> <param> <shard index> <shard total>
//
// in its own process group, with stdout and stderr appended to the run's
// log. Exit code 0 is success. When the run's context ends (timeout, kill,
// shutdown) the whole process group is killed. The script gets its run's
// inputs and publishes outputs through files and environment variables
// (scriptcontext.go).
type scriptHandler struct {
	typ    carillonv1.ScriptType
	source string
	dir    string
}

func newScriptHandler(typ carillonv1.ScriptType, source, dir string) (*scriptHandler, error) {
	if _, ok := interpreters[typ]; !ok {
		return nil, fmt.Errorf("unknown script type %v", typ)
	}
	if strings.TrimSpace(source) == "" {
		return nil, errors.New("source is empty")
	}
	return &scriptHandler{typ: typ, source: source, dir: dir}, nil
}

// ServeJob runs the script.
func (s *scriptHandler) ServeJob(ctx context.Context, job *Job) error {
	in := interpreters[s.typ]
	var path string
	for _, c := range in.commands {
		if p, err := exec.LookPath(c); err == nil {
			path = p
			break
		}
	}
	if path == "" {
		return fmt.Errorf("sdk: cannot run %s script: none of %s is in PATH", scriptTypeName(s.typ), strings.Join(in.commands, ", "))
	}
	if err := os.MkdirAll(s.dir, 0o700); err != nil {
		return fmt.Errorf("script dir: %w", err)
	}
	f, err := os.CreateTemp(s.dir, "run-"+strconv.FormatInt(job.RunID, 10)+"-*"+in.suffix)
	if err != nil {
		return fmt.Errorf("script file: %w", err)
	}
	defer func() { _ = os.Remove(f.Name()) }()
	source := s.source
	if s.typ == carillonv1.ScriptType_SCRIPT_TYPE_SHELL {
		source = strings.ReplaceAll(source, "\r\n", "\n")
	}
	_, err = f.WriteString(source)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("script file: %w", err)
	}
	files, contextEnv, err := writeScriptFiles(strings.TrimSuffix(f.Name(), in.suffix)+"-", job)
	if err != nil {
		return fmt.Errorf("script context files: %w", err)
	}
	defer files.remove()

	args := []string{f.Name(), job.Param, strconv.Itoa(job.ShardIndex), strconv.Itoa(job.ShardTotal)}
	job.Logf("----- %s script: %s %s", scriptTypeName(s.typ), path, strings.Join(quoteAll(args), " "))
	cmd := exec.CommandContext(ctx, path, args...) //nolint:gosec // GLUE scripts run the interpreter the job names, by design (Config.AllowScripts)
	cmd.Dir = s.dir
	cmd.Env = append(os.Environ(),
		"CARILLON_RUN_ID="+strconv.FormatInt(job.RunID, 10),
		"CARILLON_JOB_ID="+strconv.FormatInt(job.JobID, 10),
		"CARILLON_PARAM="+job.Param,
		"CARILLON_SHARD_INDEX="+strconv.Itoa(job.ShardIndex),
		"CARILLON_SHARD_TOTAL="+strconv.Itoa(job.ShardTotal),
		"CARILLON_ATTEMPT="+strconv.Itoa(job.Attempt),
	)
	cmd.Env = append(cmd.Env, contextEnv...)
	if !job.ScheduledAt.IsZero() {
		cmd.Env = append(cmd.Env, "CARILLON_SCHEDULED_AT="+job.ScheduledAt.UTC().Format(time.RFC3339Nano))
	}
	// The log file itself, when there is one, so the script writes to it
	// directly and Wait returns when the interpreter exits.
	if lf := job.log.File(); lf != nil {
		cmd.Stdout, cmd.Stderr = lf, lf
	} else {
		cmd.Stdout, cmd.Stderr = job.LogWriter(), job.LogWriter()
	}
	cmd.WaitDelay = scriptWaitDelay
	ownProcessGroup(cmd)

	err = cmd.Run()
	if ctx.Err() != nil {
		return context.Cause(ctx)
	}
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		return fmt.Errorf("script exited with status %d", exit.ExitCode())
	}
	if err != nil {
		return fmt.Errorf("script: %w", err)
	}
	job.Logf("----- script exited with status 0")
	if err := files.readOutputs(job); err != nil {
		return fmt.Errorf("script outputs: %w", err)
	}
	return nil
}

func scriptTypeName(t carillonv1.ScriptType) string {
	return strings.ToLower(strings.TrimPrefix(t.String(), "SCRIPT_TYPE_"))
}

func quoteAll(args []string) []string {
	q := make([]string, len(args))
	for i, a := range args {
		q[i] = strconv.Quote(a)
	}
	return q
}
