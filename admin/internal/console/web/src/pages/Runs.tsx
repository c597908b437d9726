import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { useMutation, useQuery } from "@connectrpc/connect-query";
import { useQueryClient } from "@tanstack/react-query";
import { useEffect, useRef, useState } from "react";
import { AlarmStatus, RunService, RunStatus, TriggerType, type Run } from "../gen/carillon/v1/run_pb";
import { GroupService } from "../gen/carillon/v1/group_pb";
import { fill, useEnum, useT } from "../i18n";
import { Button, ErrorBox, Pager, StatusBadge, Table, Time, wrap } from "../ui";

// Runs lists runs, newest first, filtered in the API and refreshed every
// few seconds; a run's row opens its detail and log above the table,
// where it is seen, followed while it runs.
export function Runs({ canWrite, isAdmin, jobId, runId }: { canWrite: boolean; isAdmin: boolean; jobId: string; runId: string }) {
  const [t] = useT();
  const text = useEnum();
  const [status, setStatus] = useState(0);
  const [group, setGroup] = useState("0");
  const [from, setFrom] = useState("");
  const [to, setTo] = useState("");
  const [days, setDays] = useState("30");
  const [pages, setPages] = useState<string[]>([""]);
  const reset = () => setPages([""]);
  const groups = useQuery(GroupService.method.listGroups, {});
  const q = useQuery(RunService.method.listRuns, {
    jobId: BigInt(jobId || 0), groupId: BigInt(group), status, pageSize: 50, pageToken: pages[pages.length - 1],
    from: from ? timestampFromDate(new Date(from)) : undefined, to: to ? timestampFromDate(new Date(to)) : undefined,
  }, { refetchInterval: 3_000 });
  const client = useQueryClient();
  const kill = useMutation(RunService.method.killRun, { onSuccess: () => client.invalidateQueries() });
  const del = useMutation(RunService.method.deleteRuns, { onSuccess: () => { client.invalidateQueries(); setAsk(null); } });
  // Deleting asks first, with the count a dry run of the same request
  // found: one click never deletes a history.
  const count = useMutation(RunService.method.deleteRuns);
  const [ask, setAsk] = useState<{ days: number; before: ReturnType<typeof timestampFromDate> } | null>(null);
  const [daysErr, setDaysErr] = useState(false);
  const selection = (before: ReturnType<typeof timestampFromDate>) => ({ jobId: BigInt(jobId || 0), groupId: BigInt(group), before });
  const input = "rounded border border-slate-300 px-2 py-1";
  return (
    <section>
      <h1 className="mb-3 text-lg font-semibold">{t("nav.runs")}{jobId && ` · ${t("runs.job")} ${jobId}`}</h1>
      <div className="mb-3 flex flex-wrap items-end gap-3 text-sm">
        <label>{t("runs.status")}{" "}
          <select name="status" value={status} onChange={(e) => { setStatus(Number(e.target.value)); reset(); }} className={input}>
            <option value={0}>{t("jobs.all")}</option>
            {Object.values(RunStatus).filter((v) => typeof v === "number" && v !== 0).map((v) => <option key={v} value={v}>{text("RunStatus", RunStatus, v as number)}</option>)}
          </select>
        </label>
        {!jobId && (
          <label>{t("runs.group")}{" "}
            <select name="group" value={group} onChange={(e) => { setGroup(e.target.value); reset(); }} className={input}>
              <option value="0">{t("jobs.all")}</option>
              {groups.data?.groups.map((g) => <option key={`${g.id}`} value={`${g.id}`}>{g.appName}</option>)}
            </select>
          </label>
        )}
        <label>{t("runs.from")} <input type="datetime-local" value={from} onChange={(e) => { setFrom(e.target.value); reset(); }} className={input} /></label>
        <label>{t("runs.to")} <input type="datetime-local" value={to} onChange={(e) => { setTo(e.target.value); reset(); }} className={input} /></label>
        {canWrite && (jobId || group !== "0" || isAdmin) && (
          <form aria-label="delete old runs" className="ml-auto flex items-end gap-2" onSubmit={(e) => {
            e.preventDefault();
            const n = Number(days);
            if (days.trim() === "" || !Number.isInteger(n) || n < 0) {
              setDaysErr(true);
              return;
            }
            setDaysErr(false);
            del.reset();
            const before = timestampFromDate(new Date(Date.now() - n * 86400_000));
            setAsk({ days: n, before });
            count.mutate({ ...selection(before), dryRun: true });
          }}>
            <label>{t("runs.deleteOld")} <input name="days" inputMode="numeric" size={3} value={days} onChange={(e) => { setDays(e.target.value); setAsk(null); }} className={input} /> {t("runs.days")}</label>
            <Button type="submit" kind="danger">{t("jobs.delete")}</Button>
          </form>
        )}
      </div>
      {daysErr && <p role="alert" className="mb-2 text-sm text-red-700">{t("runs.daysInvalid")}</p>}
      {ask && count.data && !count.isPending && (
        <div role="alertdialog" aria-label="confirm delete" className="mb-3 flex flex-wrap items-center gap-2 rounded border border-red-300 bg-red-50 px-3 py-2 text-sm">
          {count.data.deleted === 0n
            ? <><span>{fill(t("runs.deleteNone"), { d: ask.days })}</span><Button onClick={() => setAsk(null)}>{t("runs.close")}</Button></>
            : <>
              <span data-testid="delete-count">{fill(t("runs.confirmDelete"), { n: count.data.deleted, d: ask.days })}</span>
              <Button kind="danger" disabled={del.isPending} onClick={() => del.mutate(selection(ask.before))}>{fill(t("runs.deleteN"), { n: count.data.deleted })}</Button>
              <Button onClick={() => setAsk(null)}>{t("form.cancel")}</Button>
            </>}
        </div>
      )}
      {del.data && <p role="status" className="mb-2 text-sm">{t("runs.deleted")} {`${del.data.deleted}`}</p>}
      <ErrorBox error={q.error ?? kill.error ?? del.error ?? count.error} />
      {runId && <RunDetail key={runId} runId={runId} jobId={jobId} />}
      <Table head={["ID", t("runs.job"), t("runs.status"), t("runs.executor"), t("runs.scheduled"), t("runs.finished"), t("runs.message"), ""]}>
        {q.data?.runs.map((r) => (
          <tr key={`${r.id}`} className={runId === `${r.id}` ? "bg-indigo-50" : undefined}>
            <td className="px-3 py-2"><a className="text-indigo-700 underline" href={`#/runs?job=${jobId}&run=${r.id}`}>{`${r.id}`}</a></td>
            <td className="px-3 py-2">{`${r.jobId}`}</td>
            <td className="px-3 py-2" data-testid={`status-${r.id}`}><StatusBadge status={r.status} />{waitsForSlot(r) && <SlotBadge />}</td>
            <td className={`px-3 py-2 font-mono text-xs ${wrap}`}>{r.executorAddress}</td>
            <td className="px-3 py-2 text-xs"><Time ts={r.scheduledAt} /></td>
            <td className="px-3 py-2 text-xs"><Time ts={r.finishedAt} /></td>
            <td className="max-w-xs truncate px-3 py-2 text-xs" title={r.message}>{r.message}</td>
            <td className="px-3 py-2">
              {canWrite && r.status === RunStatus.RUNNING && <Button kind="danger" onClick={() => kill.mutate({ runId: r.id })}>{t("runs.kill")}</Button>}
            </td>
          </tr>
        ))}
      </Table>
      <Pager pages={pages} setPages={setPages} next={q.data?.nextPageToken} />
    </section>
  );
}

// RunDetail shows one run: where it went and why, its timing, result and
// alarm, and its log.
function RunDetail({ runId, jobId }: { runId: string; jobId: string }) {
  const [t] = useT();
  const text = useEnum();
  const q = useQuery(RunService.method.getRun, { id: BigInt(runId) }, { refetchInterval: (x) => (x.state.data?.run?.status === RunStatus.RUNNING ? 2_000 : false) });
  const r: Run | undefined = q.data?.run;
  const row = (k: string, v: React.ReactNode) => <><dt className="font-medium text-slate-600">{k}</dt><dd className="break-all">{v}</dd></>;
  // Opened from a row or a link: brought into view, wherever the list is.
  const ref = useRef<HTMLElement>(null);
  useEffect(() => {
    // A block: newer browsers return a promise, which React would take
    // for a cleanup function.
    void ref.current?.scrollIntoView({ block: "nearest" });
  }, [runId]);
  return (
    <section ref={ref} aria-label={`run ${runId}`} data-testid="run-detail" className="mb-4 rounded border border-indigo-200 bg-white p-4">
      <div className="mb-2 flex items-center gap-3">
        <h2 className="font-semibold">{t("runs.detail")} {runId}</h2>
        <a className="ml-auto text-sm text-indigo-700 underline" href={`#/runs${jobId ? `?job=${jobId}` : ""}`}>{t("runs.close")}</a>
      </div>
      <ErrorBox error={q.error} />
      {r && (
        <dl className="grid grid-cols-1 gap-x-4 gap-y-1 text-sm sm:grid-cols-[12rem_1fr]">
          {row(t("runs.status"), <><StatusBadge status={r.status} />{waitsForSlot(r) && <SlotBadge />} {r.settledByAdmin && <em className="text-xs">({t("runs.byAdmin")})</em>}{r.lateResult && <em className="text-xs">({t("runs.lateResult")})</em>} {r.message}</>)}
          {row(t("runs.triggerType"), text("TriggerType", TriggerType, r.triggerType))}
          {row(t("runs.executor"), <span className="font-mono">{r.executorAddress}</span>)}
          {row(t("runs.triggerMessage"), r.triggerMessage)}
          {row(t("runs.param"), <span className="font-mono">{r.param}</span>)}
          {row(t("runs.scheduled"), <Time ts={r.scheduledAt} />)}
          {row(t("runs.triggered"), <Time ts={r.triggeredAt} />)}
          {row(t("runs.started"), <Time ts={r.startedAt} />)}
          {row(t("runs.finished"), <Time ts={r.finishedAt} />)}
          {row(t("runs.attempt"), `${r.attempt}`)}
          {r.workflowRunId > 0n && row(t("runs.workflowRun"), <a data-testid="workflow-run-link" className="text-indigo-700 underline"
            href={`#/workflows?run=${r.workflowRunId}`}>{`${r.workflowRunId}`} · {r.workflowNode}</a>)}
          {Object.keys(r.inputs).length > 0 && row(t("runs.inputs"), <ContextValues testId="run-inputs" values={r.inputs} />)}
          {Object.keys(r.outputs).length > 0 && row(t("runs.outputs"), <ContextValues testId="run-outputs" values={r.outputs} />)}
          {row(t("runs.alarm"), `${text("AlarmStatus", AlarmStatus, r.alarmStatus)} ${r.alarmMessage}`)}
        </dl>
      )}
      <RunLog runId={runId} running={r?.status === RunStatus.RUNNING} />
    </section>
  );
}

// ContextValues shows a run's outputs or inputs (context between workflow
// nodes): key = value, one a line, in key order.
function ContextValues({ values, testId }: { values: { [key: string]: string }; testId: string }) {
  return (
    <ul data-testid={testId} className="max-h-48 overflow-auto font-mono text-xs">
      {Object.keys(values).sort().map((k) => (
        <li key={k} className="whitespace-pre-wrap [overflow-wrap:anywhere]"><span className="text-slate-600">{k}</span> = {values[k]}</li>
      ))}
    </ul>
  );
}

// RunLog reads a run's log from its executor through the admin a page at
// a time, the last page again every 2 s while the run runs.
function RunLog({ runId, running }: { runId: string; running: boolean }) {
  const [t] = useT();
  const [from, setFrom] = useState(1);
  const [before, setBefore] = useState(""); // the pages read so far
  const q = useQuery(RunService.method.readRunLog, { runId: BigInt(runId), fromLine: from }, { refetchInterval: running ? 2_000 : false });
  const content = before + (q.data?.content ?? "");
  const more = q.data && !q.data.end && q.data.toLine >= from;
  return (
    <section className="mt-4">
      <h2 className="mb-2 font-semibold">{t("runs.log")} · {runId}</h2>
      <ErrorBox error={q.error} />
      {/* An error is said once, above: no "Loading…" that never ends under it. */}
      {(!q.error || content) && (
        <pre data-testid="run-log" className="max-h-96 overflow-auto whitespace-pre-wrap rounded bg-slate-900 p-3 text-xs text-slate-100 [overflow-wrap:anywhere]">
          {content || (q.isPending ? t("loading") : "")}
        </pre>
      )}
      {more && <div className="mt-2"><Button onClick={() => { setBefore(content); setFrom(q.data!.toLine + 1); }}>{t("page.next")}</Button></div>}
    </section>
  );
}

// waitsForSlot says r is a PENDING run of a job with a concurrency cap
// waiting for a slot: the admin's message says so.
function waitsForSlot(r: Run) {
  return r.status === RunStatus.PENDING && r.message.startsWith("waiting for a concurrency slot");
}

// SlotBadge marks a run waiting for a concurrency slot.
function SlotBadge() {
  const [t] = useT();
  return <span data-testid="slot-wait" className="ml-1 rounded bg-amber-100 px-1.5 py-0.5 text-xs text-amber-800">{t("runs.waitingSlot")}</span>;
}
