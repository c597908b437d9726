import { useId, useMemo } from "react";
import { layout, type DagNode } from "./dag";
import { RunStatus } from "./gen/carillon/v1/run_pb";
import { useEnum } from "./i18n";

// GraphNode is a node as drawn: its key and parents, a second line
// (the job, or the node's status), and in a run its status and a link to
// its run.
export type GraphNode = DagNode & { sub?: string; status?: RunStatus; href?: string; title?: string };

const W = 168, H = 48, GAP_X = 64, GAP_Y = 20, PAD = 8;

// nodeStyle is a node's fill and stroke by its status: a node of a
// workflow (no status) is white.
const nodeStyle: Record<number, string> = {
  [RunStatus.UNSPECIFIED]: "fill-white stroke-indigo-400",
  [RunStatus.PENDING]: "fill-yellow-50 stroke-yellow-500",
  [RunStatus.RUNNING]: "fill-blue-100 stroke-blue-600",
  [RunStatus.SUCCEEDED]: "fill-green-100 stroke-green-600",
  [RunStatus.FAILED]: "fill-red-100 stroke-red-600",
  [RunStatus.TIMED_OUT]: "fill-orange-100 stroke-orange-600",
  [RunStatus.LOST]: "fill-red-100 stroke-red-600",
  [RunStatus.KILLED]: "fill-slate-300 stroke-slate-700",
  [RunStatus.SKIPPED]: "fill-slate-50 stroke-slate-400",
};

// legendOrder is the statuses the legend names, in a node's life order.
const legendOrder = [RunStatus.PENDING, RunStatus.RUNNING, RunStatus.SUCCEEDED, RunStatus.FAILED, RunStatus.TIMED_OUT,
  RunStatus.LOST, RunStatus.KILLED, RunStatus.SKIPPED];

const cut = (s: string, n: number) => (s.length > n ? s.slice(0, n - 1) + "…" : s);

// DagGraph draws a workflow's DAG left to right in SVG, layered
// (dag.ts's layout), edges as arrows from parent to child; a node with an
// href links there. With legend, the status colours are named below.
export default function DagGraph({ nodes, legend, label }: { nodes: GraphNode[]; legend?: boolean; label: string }) {
  const text = useEnum();
  const marker = "arrow" + useId().replace(/[^A-Za-z0-9_-]/g, "");
  // Laid out again only when the DAG changes, not on each status change.
  const shape = nodes.map((n) => `${n.key}<${n.dependsOn.join(",")}`).join(";");
  // eslint-disable-next-line react-hooks/exhaustive-deps
  const l = useMemo(() => layout(nodes), [shape]);
  const tallest = Math.max(1, ...l.layers.map((x) => x.length));
  const height = tallest * (H + GAP_Y) - GAP_Y + 2 * PAD;
  const width = Math.max(1, l.layers.length) * (W + GAP_X) - GAP_X + 2 * PAD;
  // xy is a node's top left corner: each layer centred on the tallest.
  const xy = (k: string) => {
    const p = l.place.get(k)!;
    const n = l.layers[p.layer].length;
    return [PAD + p.layer * (W + GAP_X), PAD + ((tallest - n) * (H + GAP_Y)) / 2 + p.order * (H + GAP_Y)];
  };
  return (
    <figure className="rounded border border-slate-200 bg-white p-2">
      <div className="overflow-x-auto">
        <svg data-testid="dag" role="img" aria-label={label} width={width} height={height} viewBox={`0 0 ${width} ${height}`} className="block">
          <defs>
            <marker id={marker} viewBox="0 0 10 10" refX="10" refY="5" markerWidth="8" markerHeight="8" orient="auto-start-reverse">
              <path d="M0,0 L10,5 L0,10 z" className="fill-slate-500" />
            </marker>
          </defs>
          {l.edges.map(([p, c]) => {
            const [px, py] = xy(p), [cx, cy] = xy(c);
            const x1 = px + W, y1 = py + H / 2, x2 = cx, y2 = cy + H / 2, dx = Math.max(GAP_X / 2, (x2 - x1) / 3);
            return <path key={`${p}->${c}`} data-edge={`${p}->${c}`} d={`M${x1},${y1} C${x1 + dx},${y1} ${x2 - dx},${y2} ${x2},${y2}`}
              fill="none" className="stroke-slate-500" strokeWidth={1.5} markerEnd={`url(#${marker})`} />;
          })}
          {nodes.map((n) => {
            const [x, y] = xy(n.key);
            const st = n.status ?? RunStatus.UNSPECIFIED;
            const box = (
              <g data-node={n.key} data-status={n.status ? RunStatus[n.status] : undefined} transform={`translate(${x},${y})`}>
                <title>{n.title ?? n.key}</title>
                <rect width={W} height={H} rx={6} strokeWidth={1.5} className={nodeStyle[st] ?? nodeStyle[0]}
                  strokeDasharray={st === RunStatus.SKIPPED ? "4 3" : undefined} />
                <text x={10} y={20} className="fill-slate-900 text-[13px] font-semibold">{cut(n.key, 20)}</text>
                <text x={10} y={38} className="fill-slate-600 text-[11px]">{cut(n.status ? text("RunStatus", RunStatus, n.status) : n.sub ?? "", 26)}</text>
              </g>
            );
            return n.href ? <a key={n.key} href={n.href} aria-label={n.title ?? n.key}>{box}</a> : <g key={n.key}>{box}</g>;
          })}
        </svg>
      </div>
      {legend && (
        <figcaption data-testid="legend" className="mt-2 flex flex-wrap gap-3 text-xs text-slate-700">
          {legendOrder.map((s) => (
            <span key={s} className="flex items-center gap-1">
              <svg width="14" height="14" aria-hidden="true"><rect x="1" y="1" width="12" height="12" rx="2" strokeWidth={1.5} className={nodeStyle[s]} /></svg>
              {text("RunStatus", RunStatus, s)}
            </span>
          ))}
        </figcaption>
      )}
    </figure>
  );
}
