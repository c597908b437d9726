#!/usr/bin/env python3
"""A Carillon executor in Python, standard library only.

It speaks Connect's JSON codec (protobuf's JSON mapping over HTTP POST) in
both directions: it serves carillon.v1.ExecutorService for the admin and
calls carillon.v1.RegistryService on it (Register every 30 s, ReportResults,
Deregister). Runs are kept in memory: a restart forgets them, and the admin
settles the runs the old process held as LOST when the new one registers.

    CARILLON_ADMIN=http://127.0.0.1:8080 CARILLON_TOKEN=... \\
        python3 executor.py --app demo --port 9999

Handlers are plain functions taking a Job; see HANDLERS at the end.
"""

import argparse
import collections
import datetime
import json
import os
import signal
import threading
import time
import urllib.error
import urllib.request
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

SERVICE = "/carillon.v1.ExecutorService/"
REGISTRY = "/carillon.v1.RegistryService/"
HEARTBEAT_SECONDS = 30
KEEP_ENDED = 10000  # ended runs kept for HeldRuns and ReadLog


def now_rfc3339():
    return datetime.datetime.now(datetime.timezone.utc).isoformat().replace("+00:00", "Z")


def parse_time(s):
    """Parses a protobuf JSON Timestamp; None when absent."""
    if not s:
        return None
    return datetime.datetime.fromisoformat(s.replace("Z", "+00:00")).timestamp()


class ConnectError(Exception):
    """An error answered in Connect's JSON error shape."""

    def __init__(self, code, message, status=400):
        super().__init__(message)
        self.code, self.message, self.status = code, message, status


class Killed(Exception):
    """Raised by Job.check once the run is killed or timed out."""


class Job:
    """What a handler gets: the run's request, a log, and a kill check."""

    def __init__(self, run):
        self._run = run
        req = run.request
        self.run_id = int(req.get("runId", 0))
        self.job_id = int(req.get("jobId", 0))
        self.param = req.get("param", "")
        self.shard_index = int(req.get("shardIndex", 0))
        self.shard_total = int(req.get("shardTotal", 1))
        self.attempt = int(req.get("attempt", 0))
        self.scheduled_at = req.get("scheduledAt", "")
        self.inputs = req.get("inputs", {})

    def log(self, line):
        self._run.add_log(line)

    def check(self):
        """Raises Killed when the run was killed or ran past its timeout."""
        if self._run.stop.is_set():
            raise Killed(self._run.stop_reason)

    def sleep(self, seconds):
        """Sleeps, raising Killed as soon as the run is killed."""
        if self._run.stop.wait(seconds):
            raise Killed(self._run.stop_reason)


class Run:
    """One run held by this executor, from its arrival to its result."""

    def __init__(self, request):
        self.request = request
        self.id = int(request["runId"])
        self.job_id = int(request.get("jobId", 0))
        self.lines = []
        self.lock = threading.Lock()
        self.stop = threading.Event()
        self.stop_reason = ""
        self.stop_status = "RUN_STATUS_KILLED"
        self.started = False
        self.ended = False
        self.started_at = None

    def add_log(self, line):
        with self.lock:
            self.lines.append(f"{now_rfc3339()} {line}")

    def kill(self, status, reason):
        self.stop_status, self.stop_reason = status, reason
        self.stop.set()


class Executor:
    def __init__(self, admin, token, app, address, handlers):
        self.admin, self.token, self.app, self.address = admin.rstrip("/"), token, app, address
        self.handlers = handlers
        self.instance = uuid.uuid4().hex
        self.lock = threading.Lock()
        self.runs = {}  # run id -> Run: those held, and the last KEEP_ENDED that ended
        self.ended = collections.deque()  # ended runs, oldest first
        self.busy = {}  # job id -> the Run it is running
        self.queues = {}  # job id -> runs waiting behind it (SERIAL)
        self.results = []  # results not yet taken by the admin
        self.results_ready = threading.Condition(self.lock)
        self.closing = threading.Event()

    # --- calls to the admin ---------------------------------------------

    def call_admin(self, method, body):
        req = urllib.request.Request(self.admin + REGISTRY + method, data=json.dumps(body).encode(), method="POST",
                                     headers={"Content-Type": "application/json"})
        if self.token:
            req.add_header("Authorization", "Bearer " + self.token)
        with urllib.request.urlopen(req, timeout=10) as res:
            return json.loads(res.read() or b"{}")

    def register(self):
        self.call_admin("Register", {"appName": self.app, "address": self.address, "instanceId": self.instance, "codec": "json"})

    def heartbeat(self):
        while not self.closing.is_set():
            try:
                self.register()
            except (OSError, urllib.error.URLError) as e:
                print(f"executor: register: {e}", flush=True)
            self.closing.wait(HEARTBEAT_SECONDS)

    def reporter(self):
        """Sends results in batches until every one is taken; retries what the admin could not take."""
        backoff = 0.5
        while True:
            with self.lock:
                while not self.results and not self.closing.is_set():
                    self.results_ready.wait()
                if not self.results and self.closing.is_set():
                    return
                batch = list(self.results[:500])
            try:
                answer = self.call_admin("ReportResults", {"results": batch, "instanceId": self.instance})
            except (OSError, urllib.error.URLError) as e:
                print(f"executor: report {len(batch)} results: {e}; retrying", flush=True)
                if self.closing.wait(backoff):
                    return
                backoff = min(backoff * 2, 30)
                continue
            outcomes = answer.get("outcomes", [])
            kept = [r for r, o in zip(batch, outcomes) if o.get("code") and o["code"] != "invalid_argument"]
            with self.lock:
                self.results = kept + self.results[len(batch):]
            backoff = 0.5
            if kept:
                time.sleep(1)

    def report(self, run, status, message):
        result = {"runId": str(run.id), "status": status, "message": message[:4096], "finishedAt": now_rfc3339(),
                  "databaseId": run.request.get("databaseId", "")}
        if run.started_at:
            result["startedAt"] = run.started_at
        with self.lock:
            run.ended = True
            self.ended.append(run.id)
            while len(self.ended) > KEEP_ENDED:
                self.runs.pop(self.ended.popleft(), None)
            self.results.append(result)
            self.results_ready.notify()

    # --- runs --------------------------------------------------------------

    def accept(self, request):
        """Takes one RunRequest, or raises ConnectError saying why not."""
        handler = self.handlers.get(request.get("handler", ""))
        if handler is None:
            raise ConnectError("not_found", f"no handler {request.get('handler', '')!r} on this executor", 404)
        run = Run(request)
        strategy = request.get("blockStrategy", "BLOCK_STRATEGY_SERIAL")
        with self.lock:
            if run.id in self.runs:
                raise ConnectError("already_exists", f"run {run.id} is held here already", 409)
            current = self.busy.get(run.job_id)
            if current is not None and strategy == "BLOCK_STRATEGY_DISCARD_LATER":
                raise ConnectError("resource_exhausted", f"job {run.job_id} is running run {current.id} (DISCARD_LATER)", 429)
            self.runs[run.id] = run
            if current is not None and strategy == "BLOCK_STRATEGY_COVER_EARLY":
                current.kill("RUN_STATUS_KILLED", f"covered by run {run.id} (COVER_EARLY)")
            if current is None:
                self.busy[run.job_id] = run
            else:
                self.queues.setdefault(run.job_id, []).append(run)
                return
        threading.Thread(target=self.execute, args=(run, handler), daemon=True).start()

    def execute(self, run, handler):
        due = parse_time(run.request.get("dueAt"))
        if due and due > time.time() and run.stop.wait(due - time.time()):
            pass
        status, message = "RUN_STATUS_SUCCEEDED", ""
        timeout = int(run.request.get("timeoutSeconds", 0))
        timer = None
        if timeout > 0:
            timer = threading.Timer(timeout, run.kill, ("RUN_STATUS_TIMED_OUT", f"timed out after {timeout} s"))
            timer.daemon = True
            timer.start()
        run.started, run.started_at = True, now_rfc3339()
        try:
            if run.stop.is_set():
                raise Killed(run.stop_reason)
            out = handler(Job(run))
            if out:
                message = str(out)
        except Killed as e:
            status, message = run.stop_status, str(e)
        except Exception as e:  # a handler's failure is the run's result
            status, message = "RUN_STATUS_FAILED", f"{type(e).__name__}: {e}"
        finally:
            if timer:
                timer.cancel()
        run.add_log(f"run ended {status.removeprefix('RUN_STATUS_')} {message}")
        self.report(run, status, message)
        self.next_of(run.job_id)

    def next_of(self, job_id):
        with self.lock:
            queue = self.queues.get(job_id) or []
            nxt = queue.pop(0) if queue else None
            if nxt is None:
                self.busy.pop(job_id, None)
                return
            self.busy[job_id] = nxt
        threading.Thread(target=self.execute, args=(nxt, self.handlers[nxt.request["handler"]]), daemon=True).start()

    # --- ExecutorService ----------------------------------------------------

    def Beat(self, body):
        return {}

    def IdleBeat(self, body):
        with self.lock:
            run = self.busy.get(int(body.get("jobId", 0)))
        if run is not None:
            return {"idle": False, "reason": f"running run {run.id}"}
        return {"idle": True}

    def Run(self, body):
        self.accept(body)
        return {}

    def RunBatch(self, body):
        outcomes = []
        for request in body.get("runs", []):
            outcome = {"runId": request.get("runId", "0")}
            try:
                self.accept(request)
            except ConnectError as e:
                outcome["code"], outcome["message"] = e.code, e.message
            outcomes.append(outcome)
        return {"outcomes": outcomes}

    def Kill(self, body):
        with self.lock:
            run = self.runs.get(int(body.get("runId", 0)))
        if run is None or run.ended:
            return {"cancelled": False}
        if body.get("beforeStart"):
            if run.started:
                return {"cancelled": False}
            with self.lock:
                queue = self.queues.get(run.job_id, [])
                if run in queue:
                    queue.remove(run)
                self.runs.pop(run.id, None)
            if not body.get("replace"):
                self.report(run, "RUN_STATUS_SKIPPED", body.get("reason") or "cancelled before its start")
            return {"cancelled": True}
        run.kill("RUN_STATUS_KILLED", body.get("reason") or "killed by the admin")
        return {"cancelled": True}

    def ReadLog(self, body):
        with self.lock:
            run = self.runs.get(int(body.get("runId", 0)))
        if run is None:
            raise ConnectError("not_found", f"no log of run {body.get('runId')} here", 404)
        start = max(int(body.get("fromLine", 1)), 1)
        with run.lock:
            lines = run.lines[start - 1:]
        return {"fromLine": start, "toLine": start + len(lines) - 1, "content": "".join(line + "\n" for line in lines),
                "end": run.ended}

    def HeldRuns(self, body):
        held = []
        with self.lock:
            for rid in body.get("runIds", []):
                run = self.runs.get(int(rid))
                if run is not None:
                    held.append({"runId": str(run.id), "state": "HELD_RUN_STATE_ENDED" if run.ended else "HELD_RUN_STATE_ACTIVE"})
        return {"runs": held, "instanceId": self.instance}


class Handler(BaseHTTPRequestHandler):
    executor = None  # set by serve

    def do_POST(self):
        ex = self.executor
        if not self.path.startswith(SERVICE) or not hasattr(Executor, self.path[len(SERVICE):]):
            return self.answer(404, {"code": "unimplemented", "message": f"{self.path} is not served here"})
        if self.headers.get("Content-Type", "").split(";")[0].strip() != "application/json":
            return self.answer(415, None)  # the admin then calls again with JSON
        if ex.token and self.headers.get("Authorization", "") != "Bearer " + ex.token:
            return self.answer(401, {"code": "unauthenticated", "message": "wrong or missing executor token"})
        length = int(self.headers.get("Content-Length", 0))
        try:
            body = json.loads(self.rfile.read(length) or b"{}")
            self.answer(200, getattr(ex, self.path[len(SERVICE):])(body))
        except ConnectError as e:
            self.answer(e.status, {"code": e.code, "message": e.message})
        except (ValueError, KeyError) as e:
            self.answer(400, {"code": "invalid_argument", "message": str(e)})

    def answer(self, status, body):
        data = json.dumps(body).encode() if body is not None else b""
        self.send_response(status)
        if body is not None:
            self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args):
        pass  # quiet: one line a call is too many


# --- handlers: what this executor can run, by name ---------------------------

def hello(job):
    job.log(f"hello from Python, param {job.param!r}, scheduled at {job.scheduled_at}")
    return "hello " + job.param


def fail(job):
    job.log("about to fail")
    raise RuntimeError("this handler always fails")


def sleep(job):
    seconds = float(job.param or "60")
    job.log(f"sleeping {seconds} s")
    job.sleep(seconds)
    return f"slept {seconds} s"


HANDLERS = {"hello": hello, "fail": fail, "sleep": sleep}


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--admin", default=os.environ.get("CARILLON_ADMIN", "http://127.0.0.1:8080"))
    p.add_argument("--app", default=os.environ.get("CARILLON_APP", "python"))
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, default=0, help="0: any free port")
    args = p.parse_args()
    server = ThreadingHTTPServer((args.host, args.port), Handler)
    address = f"http://{args.host}:{server.server_address[1]}"
    ex = Executor(args.admin, os.environ.get("CARILLON_TOKEN", ""), args.app, address, HANDLERS)
    Handler.executor = ex
    threading.Thread(target=server.serve_forever, daemon=True).start()
    threading.Thread(target=ex.heartbeat, daemon=True).start()
    reporter = threading.Thread(target=ex.reporter, daemon=True)
    reporter.start()
    print(f"executor: app {args.app} serving on {address}, admin {args.admin}", flush=True)
    signal.signal(signal.SIGTERM, lambda *_: (_ for _ in ()).throw(KeyboardInterrupt()))
    try:
        while True:
            time.sleep(3600)
    except KeyboardInterrupt:
        pass
    finally:
        ex.closing.set()
        with ex.lock:
            ex.results_ready.notify_all()
        reporter.join(timeout=10)
        try:
            ex.call_admin("Deregister", {"appName": args.app, "address": address})
        except (OSError, urllib.error.URLError):
            pass
        server.shutdown()


if __name__ == "__main__":
    main()
