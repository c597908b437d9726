import { useMutation, useQuery } from "@connectrpc/connect-query";
import { useQueryClient } from "@tanstack/react-query";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { useState } from "react";
import { GroupFilter, scheduleText, useGroupNames } from "../form";
import { GroupService } from "../gen/carillon/v1/group_pb";
import { JobService, type Job } from "../gen/carillon/v1/job_pb";
import { ScriptType } from "../gen/carillon/v1/executor_pb";
import { BackfillForm } from "../Backfill";
import { useT } from "../i18n";
import { Button, ErrorBox, Pager, StatusBadge, Table, Time, wrap } from "../ui";
import { JobForm } from "./JobForm";

// Jobs lists jobs a page at a time, filtered in the API (group, text), with
// start, stop and run-once for those who may write.
export function Jobs({ canWrite }: { canWrite: boolean }) {
  const [t] = useT();
  const [group, setGroup] = useState("0");
  const [text, setText] = useState("");
  const [handler, setHandler] = useState("");
  const [enabled, setEnabled] = useState("");
  const [pages, setPages] = useState<string[]>([""]);
  const token = pages[pages.length - 1];
  const q = useQuery(JobService.method.listJobs, { groupId: BigInt(group), text, handler, pageSize: 50, pageToken: token,
    enabled: enabled === "" ? undefined : enabled === "1" });
  const client = useQueryClient();
  const done = { onSuccess: () => client.invalidateQueries() };
  const start = useMutation(JobService.method.startJob, done);
  const stop = useMutation(JobService.method.stopJob, done);
  const trigger = useMutation(JobService.method.triggerJob, done);
  const del = useMutation(JobService.method.deleteJob, done);
  // selected are the jobs checked for a batch Start or Stop (all or none).
  const [selected, setSelected] = useState<Set<bigint>>(new Set());
  const batch = { onSuccess: () => { setSelected(new Set()); client.invalidateQueries(); } };
  const startAll = useMutation(JobService.method.startJobs, batch);
  const stopAll = useMutation(JobService.method.stopJobs, batch);
  const toggle = (id: bigint) => setSelected((s) => { const n = new Set(s); if (n.has(id)) n.delete(id); else n.add(id); return n; });
  const pageIDs = q.data?.jobs.map((j) => j.id) ?? [];
  const allSelected = pageIDs.length > 0 && pageIDs.every((id) => selected.has(id));
  const [form, setForm] = useState<{ job?: Job; copy?: boolean } | null>(null);
  const [confirm, setConfirm] = useState<bigint | null>(null);
  const [runWith, setRunWith] = useState<Job | null>(null);
  const [backfill, setBackfill] = useState<Job | null>(null);
  const [menu, setMenu] = useState<bigint | null>(null);
  const groupName = useGroupNames();
  const err = q.error ?? start.error ?? stop.error ?? trigger.error ?? del.error ?? startAll.error ?? stopAll.error;
  // actions are a job's buttons: in its row, or in its row menu.
  const actions = (j: Job) => <>
    {canWrite && (j.enabled
      ? <Button onClick={() => stop.mutate({ id: j.id })}>{t("jobs.stop")}</Button>
      : <Button onClick={() => start.mutate({ id: j.id })}>{t("jobs.start")}</Button>)}
    {canWrite && <Button onClick={() => trigger.mutate({ jobId: j.id })}>{t("jobs.trigger")}</Button>}
    {canWrite && <Button onClick={() => setRunWith(j)}>{t("jobs.runWith")}</Button>}
    {canWrite && <Button onClick={() => setBackfill(j)}>{t("jobs.backfill")}</Button>}
    {canWrite && <Button onClick={() => setForm({ job: j })}>{t("jobs.edit")}</Button>}
    {canWrite && <Button onClick={() => setForm({ job: j, copy: true })}>{t("jobs.copy")}</Button>}
    {canWrite && (confirm === j.id
      ? <Button kind="danger" onClick={() => { setConfirm(null); del.mutate({ id: j.id }); }}>{t("jobs.confirmDelete")}</Button>
      : <Button onClick={() => setConfirm(j.id)}>{t("jobs.delete")}</Button>)}
    <a className="rounded px-2 py-1 text-sm text-indigo-700 underline" href={`#/runs?job=${j.id}`}>{t("jobs.runs")}</a>
  </>;
  return (
    <section>
      <div className="mb-3 flex items-center gap-3">
        <h1 className="text-lg font-semibold">{t("nav.jobs")}</h1>
        {canWrite && !form && <Button kind="primary" onClick={() => setForm({})}>{t("jobs.new")}</Button>}
      </div>
      {form && <JobForm key={`${form.job?.id ?? "new"}-${form.copy}`} job={form.job} copy={form.copy} onDone={() => setForm(null)} />}
      {runWith && <RunWith job={runWith} onDone={() => setRunWith(null)} />}
      {backfill && <Backfill key={`${backfill.id}`} job={backfill} onDone={() => setBackfill(null)} />}
      <div className="mb-3 flex flex-wrap gap-3 text-sm">
        <GroupFilter value={group} onChange={(v) => { setGroup(v); setPages([""]); }} />
        <label>{t("jobs.enabled")}{" "}
          <select name="enabled" value={enabled} onChange={(e) => { setEnabled(e.target.value); setPages([""]); }} className="rounded border border-slate-300 px-2 py-1">
            <option value="">{t("jobs.all")}</option><option value="1">✓</option><option value="0">—</option>
          </select>
        </label>
        <label>{t("jobs.handler")}{" "}
          <input name="handler_filter" value={handler} onChange={(e) => { setHandler(e.target.value); setPages([""]); }} className="rounded border border-slate-300 px-2 py-1 font-mono" />
        </label>
        <label>{t("jobs.text")}{" "}
          <input value={text} onChange={(e) => { setText(e.target.value); setPages([""]); }} className="rounded border border-slate-300 px-2 py-1" />
        </label>
      </div>
      <ErrorBox error={err} />
      {canWrite && selected.size > 0 && (
        <div data-testid="batch" className="mb-2 flex items-center gap-2 text-sm">
          <span>{selected.size} {t("jobs.selected")}</span>
          <Button onClick={() => startAll.mutate({ ids: [...selected] })}>{t("jobs.startSelected")}</Button>
          <Button onClick={() => stopAll.mutate({ ids: [...selected] })}>{t("jobs.stopSelected")}</Button>
        </div>
      )}
      {trigger.data && (
        <p role="status" className="mb-2 text-sm text-green-700">{t("jobs.triggered")}{" "}
          {trigger.data.runIds.map((id, i) => <span key={`${id}`}>{i > 0 && ", "}
            <a className="underline" href={`#/runs?job=${trigger.variables?.jobId ?? ""}&run=${id}`}>{`${id}`}</a></span>)}
        </p>
      )}
      <Table testid="jobs-table" head={[
        canWrite ? <span className="flex items-center gap-1"><input type="checkbox" aria-label={t("jobs.selectAll")} data-testid="select-all"
          checked={allSelected} onChange={() => setSelected(allSelected ? new Set() : new Set(pageIDs))} />{t("jobs.id")}</span> : t("jobs.id"), t("jobs.description"), { label: t("jobs.name"), className: "hidden xl:table-cell" }, { label: t("jobs.group"), className: "hidden sm:table-cell" },
        { label: t("jobs.handler"), className: "hidden md:table-cell" }, { label: t("jobs.schedule"), className: "hidden lg:table-cell" },
        { label: t("jobs.next"), className: "hidden lg:table-cell" }, { label: t("jobs.enabled"), className: "hidden sm:table-cell" }, t("jobs.lastRun"), t("jobs.actions")]}>
        {q.data?.jobs.map((j) => [
          <tr key={`${j.id}`}>
            {/* The checkbox of a batch Start or Stop, in the id's cell. */}
            <td className="whitespace-nowrap px-2 py-2 sm:px-3">{canWrite && <input type="checkbox" aria-label={`${t("jobs.select")} ${j.id}`}
              data-testid={`select-${j.id}`} className="mr-1 align-middle" checked={selected.has(j.id)} onChange={() => toggle(j.id)} />}{`${j.id}`}</td>
            <td className={`min-w-24 px-2 py-2 sm:px-3 ${wrap}`}>{j.description}</td>
            <td className={`hidden px-2 py-2 sm:px-3 font-mono text-xs xl:table-cell ${wrap}`} data-testid={`name-of-${j.id}`}>{j.name || "—"}</td>
            <td className={`hidden min-w-24 px-2 py-2 sm:px-3 sm:table-cell ${wrap}`} data-testid={`group-of-${j.id}`}>{groupName.get(`${j.groupId}`) ?? `${j.groupId}`}</td>
            <td className={`hidden min-w-28 px-2 py-2 sm:px-3 font-mono md:table-cell ${wrap}`} data-testid={`handler-of-${j.id}`}>{handlerText(j)}</td>
            <td className={`hidden px-2 py-2 sm:px-3 font-mono text-xs lg:table-cell ${wrap}`}>{scheduleText(j.schedule, t)}</td>
            <td className="hidden px-2 py-2 sm:px-3 text-xs lg:table-cell"><Time ts={j.nextFireAt} /></td>
            <td className="hidden px-2 py-2 sm:px-3 sm:table-cell">{j.enabled ? "✓" : "—"}</td>
            <td className="px-2 py-2 sm:px-3" data-testid={`last-run-of-${j.id}`}>{j.lastRunId
              ? <a href={`#/runs?job=${j.id}&run=${j.lastRunId}`}><StatusBadge status={j.lastRunStatus} /></a>
              : <span className="text-xs text-slate-400">{t("jobs.noRun")}</span>}</td>
            <td className="px-2 py-2 sm:px-3">
              {/* A row menu on narrow screens (its actions in a row of their
                  own below), the buttons in line from md up. */}
              <button type="button" aria-label={`${t("jobs.menu")} ${j.id}`} aria-expanded={menu === j.id} data-testid={`menu-${j.id}`}
                onClick={() => setMenu(menu === j.id ? null : j.id)}
                className="rounded border border-slate-300 px-2 py-0.5 text-sm md:hidden">⋯</button>
              <div className="hidden flex-wrap gap-1 md:flex">{actions(j)}</div>
            </td>
          </tr>,
          menu === j.id && (
            <tr key={`${j.id}-menu`} className="bg-slate-50 md:hidden">
              <td colSpan={9} className="px-2 py-2 sm:px-3"><div data-testid={`row-menu-${j.id}`} className="flex flex-wrap gap-1">{actions(j)}</div></td>
            </tr>
          ),
        ])}
      </Table>
      {q.data?.jobs.length === 0 && <p className="mt-2 text-sm text-slate-500">{t("none")}</p>}
      <Pager pages={pages} setPages={setPages} next={q.data?.nextPageToken} />
    </section>
  );
}

// handlerText is what a job runs: its handler, or "script:shell" for a
// script job, as the CLI says it.
function handlerText(j: Job): string {
  if (j.script) return `script:${(ScriptType[j.script.type] ?? "").toLowerCase()}`;
  return j.handler || "—";
}


// RunWith runs a job once with another param, on one of its group's
// executors or by its route strategy, now or at a later time (the run
// waits PENDING until then, routed when it starts).
function RunWith({ job, onDone }: { job: Job; onDone: () => void }) {
  const [t] = useT();
  const [param, setParam] = useState(job.param);
  const [address, setAddress] = useState("");
  const [at, setAt] = useState(""); // datetime-local: the browser's zone
  const group = useQuery(GroupService.method.getGroup, { id: job.groupId });
  const client = useQueryClient();
  const trigger = useMutation(JobService.method.triggerJob, { onSuccess: () => { client.invalidateQueries(); onDone(); } });
  return (
    <form aria-label="run with" className="mb-4 flex flex-wrap items-end gap-3 rounded border border-slate-200 bg-white p-4 text-sm"
      onSubmit={(e) => {
        e.preventDefault();
        trigger.mutate({ jobId: job.id, param, addresses: address ? [address] : [], runAt: at ? timestampFromDate(new Date(at)) : undefined });
      }}>
      <span className="font-medium">{job.description}</span>
      <label className="flex flex-col">{t("form.param")}
        <textarea name="run_param" rows={1} value={param} onChange={(e) => setParam(e.target.value)} className="mt-1 rounded border border-slate-300 px-2 py-1 font-mono" />
      </label>
      <label className="flex flex-col">{t("jobs.address")}
        <select name="run_address" value={address} onChange={(e) => setAddress(e.target.value)} className="mt-1 rounded border border-slate-300 px-2 py-1">
          <option value="">{t("jobs.anyExecutor")}</option>
          {group.data?.group?.addresses.map((a) => <option key={a} value={a}>{a}</option>)}
        </select>
      </label>
      <label className="flex flex-col">{t("jobs.runAt")}
        <input type="datetime-local" name="run_at" value={at} onChange={(e) => setAt(e.target.value)} className="mt-1 rounded border border-slate-300 px-2 py-1" />
      </label>
      {at && address && <p className="text-amber-700">{t("jobs.runAtNoAddress")}</p>}
      <ErrorBox error={trigger.error} />
      <Button type="submit" kind="primary">{t("jobs.trigger")}</Button>
      <Button onClick={onDone}>{t("form.cancel")}</Button>
    </form>
  );
}

// Backfill runs a job once for every instant its schedule has between two
// times (BackfillJob).
function Backfill({ job, onDone }: { job: Job; onDone: () => void }) {
  const [t] = useT();
  const client = useQueryClient();
  const backfill = useMutation(JobService.method.backfillJob, { onSuccess: () => client.invalidateQueries() });
  return <BackfillForm title={job.description} confirm={t("jobs.backfillConfirm")} done={t("jobs.backfillDone")}
    link={`#/runs?job=${job.id}`} onDone={onDone}
    submit={async (from, to, dryRun) => {
      const r = await backfill.mutateAsync({ jobId: job.id, from, to, dryRun });
      return { instants: r.instants, made: r.runIds.length };
    }} />;
}
