/*
Package sdk runs job handlers on behalf of a Carillon admin: it is the
executor side of Carillon, in the shape of net/http.

A program registers [Handler]s by name on an [Executor] and runs it. The
executor registers with the admin under its app name, the admin sends it runs
of the jobs whose handler name matches, and the executor reports each run's
result back:

	package main

	import (
		"context"
		"errors"
		"log"
		"os"
		"os/signal"
		"syscall"

		"github.com/carillonhq/carillon/sdk"
	)

	func main() {
		ex, err := sdk.New(sdk.Config{
			AdminURLs:   []string{"http://10.0.0.2:8080", "http://10.0.0.3:8080"},
			AppName:     "billing",
			AccessToken: os.Getenv("CARILLON_TOKEN"),
		})
		if err != nil {
			log.Fatal(err)
		}
		ex.HandleFunc("invoice.send", func(ctx context.Context, job *sdk.Job) error {
			if job.Param == "" {
				return errors.New("no invoice number in the param")
			}
			job.Logf("sending invoice %s (shard %d of %d, 0-based)", job.Param, job.ShardIndex, job.ShardTotal)
			return nil // SUCCEEDED; an error means FAILED, with its text as the message
		})

		ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
		defer stop()
		if err := ex.Run(ctx); err != nil { // serves until SIGINT or SIGTERM, then stops gracefully
			log.Fatal(err)
		}
	}

# Handlers

A [Handler] has one method, ServeJob(ctx, *Job) error; [HandlerFunc] adapts an
ordinary function. [Executor.Handle] and [Executor.HandleFunc] panic on an
empty name, a nil handler or a duplicate name, like net/http's ServeMux.
[Middleware] decorates every handler ([Executor.Use]), for recovery or
logging. A handler is a plain value, so unit tests can call ServeJob
directly with a hand-made [Job]; package
[github.com/carillonhq/carillon/sdk/sdktest] runs it end to end, on a real
Executor, for a fake admin.

# Metrics and tracing

Package sdk links neither Prometheus nor OpenTelemetry. An [Observer]
([Executor.Observe]) sees each run start and end; [Config].Interceptors
wrap the admin's calls. Two subpackages use them:
[github.com/carillonhq/carillon/sdk/sdkprom] (Prometheus metrics: Register)
and [github.com/carillonhq/carillon/sdk/sdkotel] (a span per run, the child
of the admin's span of the fire, and server spans of the admin's calls).

# Runs

Each job has a worker goroutine on the executor that runs the job's runs one
after another. When a run arrives while another of the same job runs or
waits, the job's block strategy decides: SERIAL queues it; DISCARD_LATER
refuses it ([ErrDiscarded]); COVER_EARLY kills the running run and the queued
ones (reported KILLED, "covered by run N") and runs the new one. A run is
never run twice ([ErrDuplicateRun]). Runs of different jobs run concurrently.
A worker exits after about 90 seconds without work.

Run ids are those of the admin's database, which sends its identity with
every run. The executor keeps the runs, logs and results of different
databases apart: a new database, whose run ids start at 1 again, is never
taken for the one before, and each run's result names its database.

A run's context ends at its timeout (cause [ErrTimedOut], reported
TIMED_OUT), when the admin kills it (the run alone, or every run of its job)
or a COVER_EARLY run covers it ([ErrKilled], reported KILLED), or when the executor stops
([ErrShuttingDown]). Check the cause with context.Cause. The run is reported
the moment its context ends, even if the handler ignores it; see [Executor]
for what becomes of such a handler. A handler that panics fails its run with
the panic value as the message and the stack in the run's log; the executor
and the job's worker go on.

# Logs

Every run has its own log under [Config].LogDir, written through
[Job.Logf], [Job.Logger] and [Job.LogWriter]. The admin reads it a page at a
time (at most [LogPageMaxLines] lines and about [LogPageMaxBytes] bytes),
while the run goes on and after it ends, so a huge log never has to fit in
memory. A log is kept in memory while its run runs and, when the run ends,
appended as one record to a file it shares with up to 999 other runs, so a
short run costs the executor one write and no new file; a log that grows
past 64 KiB, is read while its run runs, or is written by a script gets a
file of its own. Logs are kept for [Config].LogRetention (30 days by
default), in one directory per day (the runs of each admin database in a
subdirectory of their own, those of admins that send no database identity
directly in the day's directory, as earlier versions kept them) with at most
1000 files per directory.

# Results

Results are batched to the admin and acknowledged by it. Until then each is
kept on disk under LogDir (appended to a file, like the acknowledgements),
and retried with growing backoff while no admin
answers, across restarts of the executor: a result is never lost, and the
admin ignores repeats. Calls go to the first of [Config].AdminURLs that
answers. The admin judges each result of a batch alone: a result it refuses
as malformed (invalid_argument, which a spool damaged by hand or an
executor bug may hold) is dropped with a warning naming the run and the
reason, since it would be refused every time; one it cannot take for now is
retried with backoff; the others of the batch are acknowledged. An admin
that predates per-result answers refuses the whole batch instead, which is
then retried until it is taken.

A result is spooled before its run's log is closed, and a log with a file
of its own gets an end mark when it is closed. So a process killed while
runs run (their results will never come) leaves their logs without the
mark, or no log at all when it was still in memory; the next process on
the same LogDir tells the admin, which asks it (HeldRuns), that such a run
was cut short (HELD_RUN_STATE_CUT_SHORT), or does not list it, and the
admin settles it LOST at once. It says ENDED only of a run whose result
was delivered or waits in the spool.

# Shutdown

When Run's context ends, the executor refuses new runs, drops queued ones
(reported KILLED), deregisters, waits up to [Config].ShutdownTimeout for the
running ones, cancels those still running (reported KILLED), stops serving,
delivers the pending results it can, and returns. Results it cannot deliver
are delivered by the next start.

# Context between workflow nodes

A handler publishes small values for the workflow nodes after its own with
[Job.SetOutput] (at most [MaxOutputsSize] bytes per run); a node's runs get
the merged outputs of its dependencies in [Job.Inputs]:

	func extract(ctx context.Context, job *sdk.Job) error {
		return job.SetOutput("rows", "42")
	}

	func transform(ctx context.Context, job *sdk.Job) error {
		job.Logf("transforming %s rows", job.Inputs["rows"])
		return nil
	}

# Scripts

A job can carry a script instead of a handler name: shell, Python, Node.js,
PHP or PowerShell source that the executor writes to a private temporary
file and runs with the interpreter, as
"<interpreter> <file> <param> <shard index> <shard total>", with the output in
the run's log and exit code 0 meaning success. Its environment has
CARILLON_RUN_ID, CARILLON_JOB_ID, CARILLON_PARAM, CARILLON_SHARD_INDEX,
CARILLON_SHARD_TOTAL, CARILLON_ATTEMPT (0 for the first attempt, n for the
n-th retry) and CARILLON_SCHEDULED_AT (the run's logical time, RFC 3339 in
UTC, the same in every retry; see [Job].ScheduledAt). A run of a workflow
node also gets its [Job].Inputs as CARILLON_INPUT_<KEY> variables and, as a
JSON object, in the file named by CARILLON_INPUTS_FILE; the script publishes
outputs ([Job.SetOutput]) by writing key=value lines to the file named by
CARILLON_OUTPUTS_FILE. A timeout or kill ends the
script's whole process group (on Unix). That is remote code execution by
design, so it is off unless [Config].ScriptsEnabled is set, which needs an
[Config].AccessToken.

# Security

With an [Config].AccessToken, every call between admin and executor carries
"Authorization: Bearer <token>" and the executor refuses calls without it.
Without one, anyone who can reach the executor's port can run its handlers:
set one in production, and listen on a private network.

# Protocol

The executor serves carillon.v1.ExecutorService with Connect, so the admin
may use the Connect, gRPC or gRPC-Web protocol, over HTTP/1.1 or cleartext
HTTP/2 (h2c); it calls the admin's carillon.v1.RegistryService. The SDK's API
never exposes the generated types.
*/
package sdk
