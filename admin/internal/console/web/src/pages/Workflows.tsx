import { useMutation, useQuery } from "@connectrpc/connect-query";
import { useQueryClient } from "@tanstack/react-query";
import { useState, type ReactNode } from "react";
import { BackfillForm } from "../Backfill";
import DagGraph from "../DagGraph";
import { GroupFilter, scheduleText, useGroupNames } from "../form";
import { BlockStrategy } from "../gen/carillon/v1/executor_pb";
import { JobService, MisfireStrategy, type Job } from "../gen/carillon/v1/job_pb";
import { WorkflowService, type Workflow } from "../gen/carillon/v1/workflow_pb";
import { useEnum, useT } from "../i18n";
import { Button, ErrorBox, Pager, Table, Time, wrap } from "../ui";
import { WorkflowForm, jobLabel } from "./WorkflowForm";
import { WorkflowRunBadge, WorkflowRunView, WorkflowRuns } from "./WorkflowRun";

// Workflows is the Workflows page, its own chunk (the graph and editor
// load with it): the list (#/workflows), one workflow with its graph and
// runs (#/workflows?id=3), and one of its runs (#/workflows?id=3&run=9,
// or #/workflows?run=9 from a node's run, which knows not its workflow).
export default function Workflows({ canWrite, id, run }: { canWrite: boolean; id: string; run: string }) {
  if (id) return <WorkflowDetail key={id} canWrite={canWrite} id={BigInt(id)} runId={run} />;
  return run ? <RunOnly canWrite={canWrite} runId={run} /> : <WorkflowList canWrite={canWrite} />;
}

// RunOnly shows a workflow run named without its workflow: the workflow is
// the run's.
function RunOnly({ canWrite, runId }: { canWrite: boolean; runId: string }) {
  const [t] = useT();
  const q = useQuery(WorkflowService.method.getWorkflowRun, { workflowRunId: BigInt(runId) });
  if (q.error) return <ErrorBox error={q.error} />;
  if (!q.data?.workflowRun) return <p>{t("loading")}</p>;
  return <WorkflowDetail canWrite={canWrite} id={q.data.workflowRun.workflowId} runId={runId} />;
}

// useJobs is the jobs the user sees by id (the first 500), to name nodes.
function useJobs(): Map<bigint, Job> {
  const q = useQuery(JobService.method.listJobs, { pageSize: 500 });
  return new Map((q.data?.jobs ?? []).map((j) => [j.id, j]));
}

// Actions are a workflow's buttons for writers: start or stop, run now
// (which opens the run), edit, delete (asked twice); full (the workflow's
// own page) adds a backfill of a range of its instants.
function Actions({ w, onEdit, onDeleted, full }: { w: Workflow; onEdit: () => void; onDeleted?: () => void; full?: boolean }) {
  const [t] = useT();
  const client = useQueryClient();
  const done = { onSuccess: () => client.invalidateQueries() };
  const start = useMutation(WorkflowService.method.startWorkflow, done);
  const stop = useMutation(WorkflowService.method.stopWorkflow, done);
  const trigger = useMutation(WorkflowService.method.triggerWorkflow, {
    onSuccess: (r) => { client.invalidateQueries(); window.location.hash = `#/workflows?id=${w.id}&run=${r.workflowRunId}`; },
  });
  const del = useMutation(WorkflowService.method.deleteWorkflow, { onSuccess: () => { client.invalidateQueries(); onDeleted?.(); } });
  const backfill = useMutation(WorkflowService.method.backfillWorkflow, done);
  const [confirm, setConfirm] = useState(false);
  const [backfilling, setBackfilling] = useState(false);
  return <>
    {w.enabled
      ? <Button onClick={() => stop.mutate({ id: w.id })}>{t("jobs.stop")}</Button>
      : <Button onClick={() => start.mutate({ id: w.id })}>{t("jobs.start")}</Button>}
    <Button onClick={() => trigger.mutate({ workflowId: w.id })} disabled={trigger.isPending}>{t("wf.trigger")}</Button>
    {full && <Button onClick={() => setBackfilling(true)}>{t("jobs.backfill")}</Button>}
    <Button onClick={onEdit}>{t("jobs.edit")}</Button>
    {confirm
      ? <Button kind="danger" onClick={() => { setConfirm(false); del.mutate({ id: w.id }); }}>{t("jobs.confirmDelete")}</Button>
      : <Button onClick={() => setConfirm(true)}>{t("jobs.delete")}</Button>}
    <ErrorBox error={start.error ?? stop.error ?? trigger.error ?? del.error} />
    {backfilling && <div className="w-full"><BackfillForm title={w.name} confirm={t("wf.backfillConfirm")} done={t("wf.backfillDone")}
      link={`#/workflows?id=${w.id}`} onDone={() => setBackfilling(false)}
      submit={async (from, to, dryRun) => {
        const r = await backfill.mutateAsync({ workflowId: w.id, from, to, dryRun });
        return { instants: r.instants, made: r.workflowRunIds.length };
      }} /></div>}
  </>;
}

// LastRun is a workflow's latest run's status, linked to it.
function LastRun({ w }: { w: Workflow }) {
  const [t] = useT();
  const q = useQuery(WorkflowService.method.listWorkflowRuns, { workflowId: w.id, pageSize: 1 }, { refetchInterval: 5_000 });
  const r = q.data?.workflowRuns[0];
  if (!r) return <span className="text-xs text-slate-400">{q.data ? t("jobs.noRun") : ""}</span>;
  return <a href={`#/workflows?id=${w.id}&run=${r.id}`}><WorkflowRunBadge status={r.status} /></a>;
}

// WorkflowList lists workflows a page at a time, by group, with their
// schedule and latest run, and the actions for writers.
function WorkflowList({ canWrite }: { canWrite: boolean }) {
  const [t] = useT();
  const [group, setGroup] = useState("0");
  const [pages, setPages] = useState<string[]>([""]);
  const q = useQuery(WorkflowService.method.listWorkflows, { groupId: BigInt(group), pageSize: 50, pageToken: pages[pages.length - 1] });
  const [form, setForm] = useState<{ w?: Workflow } | null>(null);
  const groupName = useGroupNames();
  return (
    <section>
      <div className="mb-3 flex items-center gap-3">
        <h1 className="text-lg font-semibold">{t("nav.workflows")}</h1>
        {canWrite && !form && <Button kind="primary" onClick={() => setForm({})}>{t("wf.new")}</Button>}
      </div>
      {form && <WorkflowForm key={`${form.w?.id ?? "new"}`} workflow={form.w} onDone={() => setForm(null)} />}
      <div className="mb-3 flex flex-wrap gap-3 text-sm">
        <GroupFilter value={group} onChange={(v) => { setGroup(v); setPages([""]); }} />
      </div>
      <ErrorBox error={q.error} />
      <Table testid="workflows-table" head={[t("jobs.id"), t("wf.name"), { label: t("jobs.group"), className: "hidden sm:table-cell" },
        { label: t("jobs.schedule"), className: "hidden lg:table-cell" }, { label: t("jobs.next"), className: "hidden lg:table-cell" },
        t("jobs.enabled"), t("jobs.lastRun"), ...(canWrite ? [t("jobs.actions")] : [])]}>
        {q.data?.workflows.map((w) => (
          <tr key={`${w.id}`}>
            <td className="px-2 py-2 sm:px-3">{`${w.id}`}</td>
            <td className={`min-w-24 px-2 py-2 sm:px-3 ${wrap}`}>
              <a className="text-indigo-700 underline" href={`#/workflows?id=${w.id}`}>{w.name}</a>
              {w.description && <div className="text-xs text-slate-500">{w.description}</div>}
            </td>
            <td className={`hidden min-w-24 px-2 py-2 sm:table-cell sm:px-3 ${wrap}`}>{groupName.get(`${w.groupId}`) ?? `${w.groupId}`}</td>
            <td className={`hidden px-2 py-2 font-mono text-xs sm:px-3 lg:table-cell ${wrap}`}>{scheduleText(w.schedule, t)}</td>
            <td className="hidden px-2 py-2 text-xs sm:px-3 lg:table-cell"><Time ts={w.nextFireAt} /></td>
            <td className="px-2 py-2 sm:px-3">{w.enabled ? "✓" : "—"}</td>
            <td className="px-2 py-2 sm:px-3" data-testid={`last-run-of-${w.id}`}><LastRun w={w} /></td>
            {canWrite && <td className="px-2 py-2 sm:px-3"><div className="flex flex-wrap gap-1">
              <Actions w={w} onEdit={() => setForm({ w })} />
            </div></td>}
          </tr>
        ))}
      </Table>
      {q.data?.workflows.length === 0 && <p className="mt-2 text-sm text-slate-500">{t("none")}</p>}
      <Pager pages={pages} setPages={setPages} next={q.data?.nextPageToken} />
    </section>
  );
}

// WorkflowDetail shows one workflow: what it is, its graph (a node names
// its job), the run opened if any, and its runs.
function WorkflowDetail({ canWrite, id, runId }: { canWrite: boolean; id: bigint; runId: string }) {
  const [t] = useT();
  const text = useEnum();
  const q = useQuery(WorkflowService.method.getWorkflow, { id });
  const jobs = useJobs();
  const [editing, setEditing] = useState(false);
  const w = q.data?.workflow;
  const row = (k: string, v: ReactNode) => <><dt className="font-medium text-slate-600">{k}</dt><dd className="break-all">{v}</dd></>;
  return (
    <section>
      <div className="mb-3 flex flex-wrap items-center gap-3">
        <a className="text-sm text-indigo-700 underline" href="#/workflows">{t("wf.all")}</a>
        <h1 className={`text-lg font-semibold ${wrap}`}>{t("nav.workflows")} · {w?.name ?? `${id}`}</h1>
        {canWrite && w && !editing && <div className="flex flex-wrap gap-1">
          <Actions w={w} onEdit={() => setEditing(true)} onDeleted={() => { window.location.hash = "#/workflows"; }} full />
        </div>}
      </div>
      <ErrorBox error={q.error} />
      {w && editing && <WorkflowForm workflow={w} onDone={() => setEditing(false)} />}
      {w && <>
        <dl className="mb-3 grid grid-cols-1 gap-x-4 gap-y-1 text-sm sm:grid-cols-[12rem_1fr]">
          {w.description && row(t("jobs.description"), w.description)}
          {row(t("jobs.schedule"), <span className="font-mono">{scheduleText(w.schedule, t)}</span>)}
          {row(t("jobs.enabled"), w.enabled ? "✓" : "—")}
          {row(t("jobs.next"), <Time ts={w.nextFireAt} />)}
          {row(t("wf.lastFire"), <Time ts={w.lastFireAt} />)}
          {row(t("form.misfire"), text("MisfireStrategy", MisfireStrategy, w.misfireStrategy))}
          {row(t("form.block"), text("BlockStrategy", BlockStrategy, w.blockStrategy))}
        </dl>
        {!runId && <div className="mb-4"><DagGraph label={t("wf.graph")} nodes={w.nodes.map((n) => ({
          key: n.key, dependsOn: n.dependsOn, sub: jobLabel(jobs.get(n.jobId), n.jobId), href: `#/runs?job=${n.jobId}`,
        }))} /></div>}
      </>}
      {runId && <WorkflowRunView key={runId} workflowId={id} runId={runId} canWrite={canWrite} jobs={jobs} />}
      <WorkflowRuns workflowId={id} runId={runId} />
    </section>
  );
}
