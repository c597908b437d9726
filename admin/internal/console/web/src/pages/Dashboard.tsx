import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { useQuery } from "@connectrpc/connect-query";
import { useState } from "react";
import { ReportService, type DayCount } from "../gen/carillon/v1/report_pb";
import { RunService, RunStatus } from "../gen/carillon/v1/run_pb";
import { fill, useT } from "../i18n";
import { Button, ErrorBox, StatusBadge, Table, Time } from "../ui";

// Dashboard shows the counts and runs per day, succeeded and failed, over
// 7 or 30 days (a MEMBER's, of their groups).
export function Dashboard() {
  const [t] = useT();
  const [days, setDays] = useState(7);
  // The range's start, fixed when the page opens: a new one on every render
  // would be a new query every render.
  const [from] = useState(() => ({ 7: timestampFromDate(new Date(Date.now() - 6 * 86400_000)), 30: timestampFromDate(new Date(Date.now() - 29 * 86400_000)) }));
  const q = useQuery(ReportService.method.getDashboard, { from: days === 30 ? from[30] : from[7] }, { refetchInterval: 10_000 });
  const d = q.data;
  return (
    <section aria-labelledby="dash-h">
      <h1 id="dash-h" className="sr-only">{t("nav.dashboard")}</h1>
      <ErrorBox error={q.error} />
      <div className="grid grid-cols-1 gap-3 sm:grid-cols-3">
        <Stat label={t("dash.jobs")} value={d ? `${d.jobCount}` : "…"} sub={d ? `${d.enabledJobCount} ${t("dash.enabled")}` : ""} />
        <Stat label={t("dash.executors")} value={d ? `${d.executorCount}` : "…"} />
        <Stat label={t("dash.runs")} value={d ? `${d.runCount}` : "…"} sub={`${days} ${t("dash.days")}`} />
      </div>
      <div className="mt-6 flex items-center gap-2">
        <h2 className="text-lg font-semibold">{t("dash.perDay")}</h2>
        <Button onClick={() => setDays(7)} kind={days === 7 ? "primary" : undefined}>7 {t("dash.days")}</Button>
        <Button onClick={() => setDays(30)} kind={days === 30 ? "primary" : undefined}>30 {t("dash.days")}</Button>
      </div>
      {d && <Chart days={d.days} labels={[t("dash.succeeded"), t("dash.failed"), t("dash.running")]} />}
      <div className="mt-6 grid grid-cols-1 gap-6 lg:grid-cols-2">
        <RecentRuns title={t("dash.runningNow")} status={RunStatus.RUNNING} empty={t("dash.noneRunning")} testid="running-now" />
        <RecentRuns title={t("dash.recentFailures")} status={RunStatus.FAILED} empty={t("dash.noFailures")} testid="recent-failures" />
      </div>
    </section>
  );
}

// RecentRuns lists the newest runs of a status (a page of 10), saying
// which attempt each is (a retry, or the first), or empty when it has none.
function RecentRuns({ title, status, empty, testid }: { title: string; status: RunStatus; empty: string; testid: string }) {
  const [t] = useT();
  const q = useQuery(RunService.method.listRuns, { status, pageSize: 10 }, { refetchInterval: 5_000 });
  return (
    <div data-testid={testid}>
      <h2 className="mb-2 font-semibold">{title}</h2>
      <ErrorBox error={q.error} />
      {q.data?.runs.length === 0 ? <p className="text-sm text-slate-500">{empty}</p> : (
        <Table head={["ID", t("runs.job"), t("runs.status"), t("dash.attempt"), t("runs.scheduled"), t("runs.message")]}>
          {q.data?.runs.map((r) => (
            <tr key={`${r.id}`}>
              <td className="px-3 py-2"><a className="text-indigo-700 underline" href={`#/runs?job=${r.jobId}&run=${r.id}`}>{`${r.id}`}</a></td>
              <td className="px-3 py-2">{`${r.jobId}`}</td>
              <td className="px-3 py-2"><StatusBadge status={r.status} /></td>
              <td className="whitespace-nowrap px-3 py-2 text-xs" data-testid={`attempt-${r.id}`}>{r.attempt > 0 ? fill(t("dash.retry"), { n: r.attempt }) : t("dash.firstAttempt")}</td>
              <td className="px-3 py-2 text-xs"><Time ts={r.scheduledAt} /></td>
              <td className="max-w-xs truncate px-3 py-2 text-xs" title={r.message}>{r.message}</td>
            </tr>
          ))}
        </Table>
      )}
    </div>
  );
}

function Stat({ label, value, sub }: { label: string; value: string; sub?: string }) {
  return (
    <div className="rounded border border-slate-200 bg-white p-4">
      <div className="text-sm text-slate-500">{label}</div>
      <div className="text-2xl font-semibold">{value}</div>
      {sub && <div className="text-xs text-slate-500">{sub}</div>}
    </div>
  );
}

// Chart is a stacked bar per day, in SVG: no chart library needed for one chart.
function Chart({ days, labels }: { days: DayCount[]; labels: string[] }) {
  const max = Math.max(1, ...days.map((d) => Number(d.succeeded + d.failed + d.running)));
  const w = 24, gap = 6, h = 160;
  const colors = ["fill-green-500", "fill-red-500", "fill-blue-400"];
  const swatches = ["bg-green-500", "bg-red-500", "bg-blue-400"]; // literal: Tailwind keeps only classes it sees
  return (
    <figure className="mt-3 overflow-x-auto rounded border border-slate-200 bg-white p-3">
      <svg role="img" aria-label={labels.join(", ")} width={days.length * (w + gap)} height={h + 40}>
        {days.map((d, i) => {
          let y = h;
          return (
            <g key={d.day} transform={`translate(${i * (w + gap)},0)`}>
              {[d.succeeded, d.failed, d.running].map((n, k) => {
                const bh = (Number(n) / max) * h;
                y -= bh;
                return <rect key={k} x={0} y={y} width={w} height={bh} className={colors[k]}><title>{`${d.day} ${labels[k]}: ${n}`}</title></rect>;
              })}
              <text x={w / 2} y={h + 14} textAnchor="middle" className="fill-slate-500 text-[9px]">{d.day.slice(5)}</text>
            </g>
          );
        })}
      </svg>
      <figcaption className="mt-1 flex gap-4 text-xs">
        {labels.map((l, k) => <span key={l}><span className={`mr-1 inline-block h-2 w-2 ${swatches[k]}`} />{l}</span>)}
      </figcaption>
    </figure>
  );
}
