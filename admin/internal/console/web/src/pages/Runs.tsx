import { useMutation, useQuery } from "@connectrpc/connect-query";
import { useQueryClient } from "@tanstack/react-query";
import { useState } from "react";
import { RunService, RunStatus } from "../gen/carillon/v1/run_pb";
import { useT } from "../i18n";
import { Button, ErrorBox, StatusBadge, Table, Time } from "../ui";

// Runs lists runs, newest first, filtered in the API and refreshed every
// few seconds; a run's row opens its log, followed while it runs.
export function Runs({ canWrite, jobId, runId }: { canWrite: boolean; jobId: string; runId: string }) {
  const [t] = useT();
  const [status, setStatus] = useState(0);
  const [pages, setPages] = useState<string[]>([""]);
  const q = useQuery(RunService.method.listRuns, { jobId: BigInt(jobId || 0), status, pageSize: 50, pageToken: pages[pages.length - 1] },
    { refetchInterval: 3_000 });
  const client = useQueryClient();
  const kill = useMutation(RunService.method.killRun, { onSuccess: () => client.invalidateQueries() });
  return (
    <section>
      <h1 className="mb-3 text-lg font-semibold">{t("nav.runs")}{jobId && ` · ${t("runs.job")} ${jobId}`}</h1>
      <label className="mb-3 block text-sm">{t("runs.status")}{" "}
        <select value={status} onChange={(e) => { setStatus(Number(e.target.value)); setPages([""]); }} className="rounded border border-slate-300 px-2 py-1">
          <option value={0}>{t("jobs.all")}</option>
          {Object.values(RunStatus).filter((v) => typeof v === "number" && v !== 0).map((v) => <option key={v} value={v}>{RunStatus[v as number]}</option>)}
        </select>
      </label>
      <ErrorBox error={q.error ?? kill.error} />
      <Table head={["ID", t("runs.job"), t("runs.status"), t("runs.executor"), t("runs.scheduled"), t("runs.finished"), t("runs.message"), ""]}>
        {q.data?.runs.map((r) => (
          <tr key={`${r.id}`} className={runId === `${r.id}` ? "bg-indigo-50" : undefined}>
            <td className="px-3 py-2"><a className="text-indigo-700 underline" href={`#/runs?job=${jobId}&run=${r.id}`}>{`${r.id}`}</a></td>
            <td className="px-3 py-2">{`${r.jobId}`}</td>
            <td className="px-3 py-2" data-testid={`status-${r.id}`}><StatusBadge status={r.status} /></td>
            <td className="px-3 py-2 font-mono text-xs">{r.executorAddress}</td>
            <td className="px-3 py-2 text-xs"><Time ts={r.scheduledAt} /></td>
            <td className="px-3 py-2 text-xs"><Time ts={r.finishedAt} /></td>
            <td className="max-w-xs truncate px-3 py-2 text-xs" title={r.message}>{r.message}</td>
            <td className="px-3 py-2">
              {canWrite && r.status === RunStatus.RUNNING && <Button kind="danger" onClick={() => kill.mutate({ runId: r.id })}>{t("runs.kill")}</Button>}
            </td>
          </tr>
        ))}
      </Table>
      <div className="mt-3 flex gap-2">
        {pages.length > 1 && <Button onClick={() => setPages([""])}>{t("page.first")}</Button>}
        {q.data?.nextPageToken && <Button onClick={() => setPages([...pages, q.data!.nextPageToken])}>{t("page.next")}</Button>}
      </div>
      {runId && <RunLog runId={runId} running={q.data?.runs.find((r) => `${r.id}` === runId)?.status === RunStatus.RUNNING} />}
    </section>
  );
}

// RunLog reads a run's log from its executor through the admin, from the
// first line, again every 2 s while the run runs.
function RunLog({ runId, running }: { runId: string; running: boolean }) {
  const [t] = useT();
  const q = useQuery(RunService.method.readRunLog, { runId: BigInt(runId), fromLine: 1 }, { refetchInterval: running ? 2_000 : false });
  return (
    <section className="mt-4">
      <h2 className="mb-2 font-semibold">{t("runs.log")} · {runId}</h2>
      <ErrorBox error={q.error} />
      <pre data-testid="run-log" className="max-h-96 overflow-auto rounded bg-slate-900 p-3 text-xs text-slate-100">{q.data?.content ?? t("loading")}</pre>
    </section>
  );
}
