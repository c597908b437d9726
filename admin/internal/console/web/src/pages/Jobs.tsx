import { useMutation, useQuery } from "@connectrpc/connect-query";
import { useQueryClient } from "@tanstack/react-query";
import { useState } from "react";
import { GroupService } from "../gen/carillon/v1/group_pb";
import { JobService, ScheduleType, type Job } from "../gen/carillon/v1/job_pb";
import { useT } from "../i18n";
import { Button, ErrorBox, Table, Time } from "../ui";

// Jobs lists jobs a page at a time, filtered in the API (group, text), with
// start, stop and run-once for those who may write.
export function Jobs({ canWrite }: { canWrite: boolean }) {
  const [t] = useT();
  const [group, setGroup] = useState("0");
  const [text, setText] = useState("");
  const [pages, setPages] = useState<string[]>([""]);
  const token = pages[pages.length - 1];
  const groups = useQuery(GroupService.method.listGroups, {});
  const q = useQuery(JobService.method.listJobs, { groupId: BigInt(group), text, pageSize: 50, pageToken: token });
  const client = useQueryClient();
  const done = { onSuccess: () => client.invalidateQueries() };
  const start = useMutation(JobService.method.startJob, done);
  const stop = useMutation(JobService.method.stopJob, done);
  const trigger = useMutation(JobService.method.triggerJob, done);
  const err = q.error ?? start.error ?? stop.error ?? trigger.error;
  return (
    <section>
      <h1 className="mb-3 text-lg font-semibold">{t("nav.jobs")}</h1>
      <div className="mb-3 flex flex-wrap gap-3 text-sm">
        <label>{t("jobs.group")}{" "}
          <select value={group} onChange={(e) => { setGroup(e.target.value); setPages([""]); }} className="rounded border border-slate-300 px-2 py-1">
            <option value="0">{t("jobs.all")}</option>
            {groups.data?.groups.map((g) => <option key={`${g.id}`} value={`${g.id}`}>{g.title} ({g.appName})</option>)}
          </select>
        </label>
        <label>{t("jobs.text")}{" "}
          <input value={text} onChange={(e) => { setText(e.target.value); setPages([""]); }} className="rounded border border-slate-300 px-2 py-1" />
        </label>
      </div>
      <ErrorBox error={err} />
      {trigger.data && <p role="status" className="mb-2 text-sm text-green-700">{t("jobs.triggered")} {trigger.data.runIds.map(String).join(", ")}</p>}
      <Table head={[t("jobs.id"), t("jobs.description"), t("jobs.handler"), t("jobs.schedule"), t("jobs.next"), t("jobs.enabled"), t("jobs.actions")]}>
        {q.data?.jobs.map((j) => (
          <tr key={`${j.id}`}>
            <td className="px-3 py-2">{`${j.id}`}</td>
            <td className="px-3 py-2">{j.description}</td>
            <td className="px-3 py-2 font-mono">{j.handler}</td>
            <td className="px-3 py-2 font-mono text-xs">{schedule(j)}</td>
            <td className="px-3 py-2 text-xs"><Time ts={j.nextFireAt} /></td>
            <td className="px-3 py-2">{j.enabled ? "✓" : "—"}</td>
            <td className="flex gap-1 px-3 py-2">
              {canWrite && (j.enabled
                ? <Button onClick={() => stop.mutate({ id: j.id })}>{t("jobs.stop")}</Button>
                : <Button onClick={() => start.mutate({ id: j.id })}>{t("jobs.start")}</Button>)}
              {canWrite && <Button onClick={() => trigger.mutate({ jobId: j.id })}>{t("jobs.trigger")}</Button>}
              <a className="rounded px-2 py-1 text-sm text-indigo-700 underline" href={`#/runs?job=${j.id}`}>{t("jobs.runs")}</a>
            </td>
          </tr>
        ))}
      </Table>
      {q.data?.jobs.length === 0 && <p className="mt-2 text-sm text-slate-500">{t("none")}</p>}
      <div className="mt-3 flex gap-2">
        {pages.length > 1 && <Button onClick={() => setPages([""])}>{t("page.first")}</Button>}
        {q.data?.nextPageToken && <Button onClick={() => setPages([...pages, q.data!.nextPageToken])}>{t("page.next")}</Button>}
      </div>
    </section>
  );
}

function schedule(j: Job): string {
  const s = j.schedule;
  if (!s) return "";
  switch (s.type) {
    case ScheduleType.CRON:
      return `${s.cron}${s.timeZone ? ` (${s.timeZone})` : ""}`;
    case ScheduleType.FIX_RATE:
      return `every ${s.intervalSeconds}s`;
    case ScheduleType.FIX_DELAY:
      return `${s.intervalSeconds}s after each`;
    default:
      return "—";
  }
}
