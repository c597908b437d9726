import type { Timestamp } from "@bufbuild/protobuf/wkt";
import { timestampDate } from "@bufbuild/protobuf/wkt";
import { ConnectError } from "@connectrpc/connect";
import type { ReactNode } from "react";
import { RunStatus } from "./gen/carillon/v1/run_pb";
import { useEnum, useT } from "./i18n";

// Time shows in the browser's zone, with the UTC instant on hover.
export function Time({ ts }: { ts?: Timestamp }) {
  if (!ts) return <span className="text-slate-400">—</span>;
  const d = timestampDate(ts);
  return <time dateTime={d.toISOString()} title={d.toISOString()}>{d.toLocaleString()}</time>;
}

const statusStyle: Record<number, string> = {
  [RunStatus.RUNNING]: "bg-blue-100 text-blue-800",
  [RunStatus.SUCCEEDED]: "bg-green-100 text-green-800",
  [RunStatus.FAILED]: "bg-red-100 text-red-800",
  [RunStatus.TIMED_OUT]: "bg-orange-100 text-orange-800",
  [RunStatus.KILLED]: "bg-slate-200 text-slate-800",
  [RunStatus.LOST]: "bg-red-100 text-red-800",
  [RunStatus.PENDING]: "bg-yellow-100 text-yellow-800",
  [RunStatus.SKIPPED]: "bg-slate-100 text-slate-600",
};

// StatusBadge is a run's status, in the current language.
export function StatusBadge({ status }: { status: RunStatus }) {
  const text = useEnum();
  return <span className={`whitespace-nowrap rounded px-2 py-0.5 text-xs font-medium ${statusStyle[status] ?? ""}`}>{text("RunStatus", RunStatus, status)}</span>;
}

export function ErrorBox({ error }: { error: unknown }) {
  if (!error) return null;
  const msg = error instanceof ConnectError ? `${error.code ? ConnectError.from(error).rawMessage : ""}` : String(error);
  return (
    <p role="alert" className="my-2 rounded border border-red-300 bg-red-50 px-3 py-2 text-sm text-red-800">
      {msg || String(error)}
    </p>
  );
}

export function Button(props: { onClick?: () => void; children: ReactNode; kind?: "primary" | "danger"; disabled?: boolean; type?: "submit" | "button" }) {
  const color =
    props.kind === "primary" ? "bg-indigo-600 text-white hover:bg-indigo-700" : props.kind === "danger" ? "bg-red-600 text-white hover:bg-red-700" : "bg-white border border-slate-300 hover:bg-slate-100";
  return (
    <button type={props.type ?? "button"} disabled={props.disabled} onClick={props.onClick}
      className={`rounded px-2.5 py-1 text-sm font-medium focus:outline-none focus:ring-2 focus:ring-indigo-400 disabled:opacity-50 ${color}`}>
      {props.children}
    </button>
  );
}

// Col is a table's column heading with the classes of its cells (e.g.
// "hidden md:table-cell": shown from a width up).
export type Col = { label: ReactNode; className?: string };

// wrap lets long unbroken text (a name, a URL, a message) break anywhere
// rather than widen its table and the page.
export const wrap = "[overflow-wrap:anywhere]";

export function Table({ head, children, testid }: { head: (ReactNode | Col)[]; children: ReactNode; testid?: string }) {
  const isCol = (h: ReactNode | Col): h is Col => typeof h === "object" && h !== null && "label" in h;
  return (
    <div data-testid={testid} className="overflow-x-auto rounded border border-slate-200 bg-white">
      <table className="min-w-full text-left text-sm">
        <thead className="bg-slate-100 text-xs uppercase text-slate-600">
          <tr>{head.map((h, i) => <th key={i} scope="col" className={`px-2 py-2 sm:px-3 sm:whitespace-nowrap ${isCol(h) ? h.className ?? "" : ""}`}>{isCol(h) ? h.label : h}</th>)}</tr>
        </thead>
        <tbody className="divide-y divide-slate-100">{children}</tbody>
      </table>
    </div>
  );
}

// Pager is a paged list's buttons: back to the first page once past it,
// and the next page while there is one. pages are the page tokens read so
// far, the last the page shown; next is the response's next_page_token.
export function Pager({ pages, setPages, next }: { pages: string[]; setPages: (p: string[]) => void; next?: string }) {
  const [t] = useT();
  return (
    <div className="mt-3 flex gap-2">
      {pages.length > 1 && <Button onClick={() => setPages([""])}>{t("page.first")}</Button>}
      {next && <Button onClick={() => setPages([...pages, next])}>{t("page.next")}</Button>}
    </div>
  );
}
