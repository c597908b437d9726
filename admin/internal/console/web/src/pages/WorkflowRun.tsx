import { createConnectQueryKey, useMutation, useQuery } from "@connectrpc/connect-query";
import { useQueryClient } from "@tanstack/react-query";
import { useEffect, useRef, useState, type ReactNode } from "react";
import DagGraph from "../DagGraph";
import type { Job } from "../gen/carillon/v1/job_pb";
import { RunStatus, TriggerType } from "../gen/carillon/v1/run_pb";
import { WorkflowRunStatus, WorkflowService, type WorkflowNodeRun } from "../gen/carillon/v1/workflow_pb";
import { useEnum, useT } from "../i18n";
import { Button, ErrorBox, Pager, StatusBadge, Table, Time, wrap } from "../ui";
import { jobLabel } from "./WorkflowForm";

const runStyle: Record<number, string> = {
  [WorkflowRunStatus.PENDING]: "bg-yellow-100 text-yellow-800",
  [WorkflowRunStatus.RUNNING]: "bg-blue-100 text-blue-800",
  [WorkflowRunStatus.SUCCEEDED]: "bg-green-100 text-green-800",
  [WorkflowRunStatus.FAILED]: "bg-red-100 text-red-800",
  [WorkflowRunStatus.CANCELLED]: "bg-slate-200 text-slate-800",
  [WorkflowRunStatus.SKIPPED]: "bg-slate-100 text-slate-600",
};

// WorkflowRunBadge is a workflow run's status, in the current language.
export function WorkflowRunBadge({ status }: { status: WorkflowRunStatus }) {
  const text = useEnum();
  return <span className={`whitespace-nowrap rounded px-2 py-0.5 text-xs font-medium ${runStyle[status] ?? ""}`}>{text("WorkflowRunStatus", WorkflowRunStatus, status)}</span>;
}

// active says whether a workflow run may still change.
export const active = (s: WorkflowRunStatus) => s === WorkflowRunStatus.PENDING || s === WorkflowRunStatus.RUNNING;

// nodeHref is the Runs page's detail of a node's run, or nothing while it
// has none (waiting, or skipped).
const nodeHref = (n: WorkflowNodeRun) => (n.runId ? `#/runs?job=${n.jobId}&run=${n.runId}` : undefined);

// WorkflowRunView shows one workflow run: its status, timing and why it
// ended, its graph coloured by each node's status (a node links to its
// run and log), its nodes as a table, and Retry and Cancel for writers;
// followed every 2 s while it may change.
export function WorkflowRunView({ workflowId, runId, canWrite, jobs }: { workflowId: bigint; runId: string; canWrite: boolean; jobs: Map<bigint, Job> }) {
  const [t] = useT();
  const text = useEnum();
  const q = useQuery(WorkflowService.method.getWorkflowRun, { workflowRunId: BigInt(runId) },
    { refetchInterval: (x) => (!x.state.data?.workflowRun || active(x.state.data.workflowRun.status) ? 2_000 : false) });
  const client = useQueryClient();
  const done = { onSuccess: () => client.invalidateQueries() };
  const retry = useMutation(WorkflowService.method.retryWorkflowRun, done);
  const cancel = useMutation(WorkflowService.method.cancelWorkflowRun, done);
  const r = q.data?.workflowRun;
  // The runs list below says the new status as soon as this view does.
  const status = r?.status;
  useEffect(() => {
    if (status !== undefined) void client.invalidateQueries({ queryKey: createConnectQueryKey({ schema: WorkflowService.method.listWorkflowRuns, cardinality: undefined }) });
  }, [status, client]);
  const ref = useRef<HTMLElement>(null);
  useEffect(() => { void ref.current?.scrollIntoView({ block: "nearest" }); }, [runId]);
  const row = (k: string, v: ReactNode) => <><dt className="font-medium text-slate-600">{k}</dt><dd className="break-all">{v}</dd></>;
  return (
    <section ref={ref} aria-label={`workflow run ${runId}`} data-testid="workflow-run" className="mb-4 rounded border border-indigo-200 bg-white p-4">
      <div className="mb-2 flex flex-wrap items-center gap-3">
        <h2 className="font-semibold">{t("wf.run")} {runId}</h2>
        {r && <span data-testid="workflow-run-status"><WorkflowRunBadge status={r.status} /></span>}
        {canWrite && r && (r.status === WorkflowRunStatus.FAILED || r.status === WorkflowRunStatus.CANCELLED) &&
          <Button onClick={() => retry.mutate({ workflowRunId: r.id })} disabled={retry.isPending}>{t("wf.retry")}</Button>}
        {canWrite && r && active(r.status) &&
          <Button kind="danger" onClick={() => cancel.mutate({ workflowRunId: r.id })} disabled={cancel.isPending}>{t("wf.cancelRun")}</Button>}
        <a className="ml-auto text-sm text-indigo-700 underline" href={`#/workflows?id=${workflowId}`}>{t("runs.close")}</a>
      </div>
      <ErrorBox error={q.error ?? retry.error ?? cancel.error} />
      {r && <>
        <dl className="mb-3 grid grid-cols-1 gap-x-4 gap-y-1 text-sm sm:grid-cols-[12rem_1fr]">
          {row(t("runs.triggerType"), text("TriggerType", TriggerType, r.triggerType))}
          {row(t("runs.scheduled"), <Time ts={r.scheduledAt} />)}
          {row(t("wf.started"), <Time ts={r.startedAt} />)}
          {row(t("runs.finished"), <Time ts={r.finishedAt} />)}
          {row(t("wf.attempt"), `${r.attempt}`)}
          {r.param !== undefined && row(t("runs.param"), <span className="font-mono">{r.param}</span>)}
          {r.message && row(t("runs.message"), r.message)}
        </dl>
        <DagGraph legend label={`${t("wf.run")} ${runId}`} nodes={r.nodes.map((n) => ({
          key: n.key, dependsOn: n.dependsOn, status: n.status || undefined, href: nodeHref(n),
          title: `${n.key} · ${jobLabel(jobs.get(n.jobId), n.jobId)} · ${text("RunStatus", RunStatus, n.status)}${n.message ? ` · ${n.message}` : ""}`,
        }))} />
        <p className="my-2 text-xs text-slate-500">{t("wf.clickNode")}</p>
        <Table testid="workflow-run-nodes" head={[t("wf.key"), t("wf.job"), t("runs.status"), t("wf.nodeRun"), t("wf.attempt"), t("wf.started"), t("runs.finished"), t("runs.message")]}>
          {r.nodes.map((n) => (
            <tr key={n.key}>
              <td className="px-2 py-2 font-mono sm:px-3">{n.key}</td>
              <td className={`min-w-24 px-2 py-2 sm:px-3 ${wrap}`}>{jobLabel(jobs.get(n.jobId), n.jobId)}</td>
              <td className="px-2 py-2 sm:px-3" data-testid={`node-status-${n.key}`}><StatusBadge status={n.status} /></td>
              <td className="px-2 py-2 sm:px-3">{n.runId ? <a className="text-indigo-700 underline" href={nodeHref(n)}>{`${n.runId}`}</a> : "—"}</td>
              <td className="px-2 py-2 sm:px-3">{n.attempt}</td>
              <td className="px-2 py-2 text-xs sm:px-3"><Time ts={n.startedAt} /></td>
              <td className="px-2 py-2 text-xs sm:px-3"><Time ts={n.finishedAt} /></td>
              <td className={`px-2 py-2 text-xs sm:px-3 ${wrap}`}>{n.message}</td>
            </tr>
          ))}
        </Table>
      </>}
    </section>
  );
}

// WorkflowRuns lists a workflow's runs, newest first, a page at a time,
// refreshed every few seconds; a run's id opens it.
export function WorkflowRuns({ workflowId, runId }: { workflowId: bigint; runId: string }) {
  const [t] = useT();
  const text = useEnum();
  const [pages, setPages] = useState<string[]>([""]);
  const q = useQuery(WorkflowService.method.listWorkflowRuns, { workflowId, pageSize: 50, pageToken: pages[pages.length - 1] }, { refetchInterval: 3_000 });
  return (
    <section>
      <h2 className="mb-2 font-semibold">{t("wf.runs")}</h2>
      <ErrorBox error={q.error} />
      <Table testid="workflow-runs" head={["ID", t("runs.status"), t("runs.triggerType"), t("runs.scheduled"), t("wf.started"), t("runs.finished"), t("wf.attempt"), t("runs.message")]}>
        {q.data?.workflowRuns.map((r) => (
          <tr key={`${r.id}`} className={runId === `${r.id}` ? "bg-indigo-50" : undefined}>
            <td className="px-3 py-2"><a className="text-indigo-700 underline" href={`#/workflows?id=${workflowId}&run=${r.id}`}>{`${r.id}`}</a></td>
            <td className="px-3 py-2" data-testid={`workflow-run-status-${r.id}`}><WorkflowRunBadge status={r.status} /></td>
            <td className="px-3 py-2 text-xs">{text("TriggerType", TriggerType, r.triggerType)}</td>
            <td className="px-3 py-2 text-xs"><Time ts={r.scheduledAt} /></td>
            <td className="px-3 py-2 text-xs"><Time ts={r.startedAt} /></td>
            <td className="px-3 py-2 text-xs"><Time ts={r.finishedAt} /></td>
            <td className="px-3 py-2">{r.attempt}</td>
            <td className="max-w-xs truncate px-3 py-2 text-xs" title={r.message}>{r.message}</td>
          </tr>
        ))}
      </Table>
      {q.data?.workflowRuns.length === 0 && <p className="mt-2 text-sm text-slate-500">{t("none")}</p>}
      <Pager pages={pages} setPages={setPages} next={q.data?.nextPageToken} />
    </section>
  );
}
