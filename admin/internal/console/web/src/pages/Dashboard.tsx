import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { useQuery } from "@connectrpc/connect-query";
import { useState } from "react";
import { ReportService, type DayCount } from "../gen/carillon/v1/report_pb";
import { useT } from "../i18n";
import { Button, ErrorBox } from "../ui";

// Dashboard shows the counts and runs per day, succeeded and failed, over
// 7 or 30 days (a MEMBER's, of their groups).
export function Dashboard() {
  const [t] = useT();
  const [days, setDays] = useState(7);
  const [from] = useState(() => new Date(Date.now() - 29 * 86400_000));
  const q = useQuery(ReportService.method.getDashboard, { from: timestampFromDate(days === 30 ? from : new Date(Date.now() - 6 * 86400_000)) },
    { refetchInterval: 10_000 });
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
    </section>
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
        {labels.map((l, k) => <span key={l}><span className={`mr-1 inline-block h-2 w-2 ${colors[k].replace("fill-", "bg-")}`} />{l}</span>)}
      </figcaption>
    </figure>
  );
}
