import { timestampFromDate, type Timestamp } from "@bufbuild/protobuf/wkt";
import { useState } from "react";
import { fill, useT } from "./i18n";
import { Button, ErrorBox, Time } from "./ui";

// What a backfill call answers: the instants of its range, and how many
// runs (or workflow runs) it made; none on a dry run.
export type BackfillAnswer = { instants: Timestamp[]; made: number };

// BackfillForm runs a job or workflow once for every instant its schedule
// has between two times (BackfillJob, BackfillWorkflow): a preview lists
// the instants (a dry run), a confirmation makes the runs. submit makes
// the call; confirm and done are the words of the button and the outcome.
export function BackfillForm({ title, submit, confirm, done, link, onDone }: {
  title: string;
  submit: (from: Timestamp | undefined, to: Timestamp | undefined, dryRun: boolean) => Promise<BackfillAnswer>;
  confirm: string; done: string; link: string; onDone: () => void;
}) {
  const [t] = useT();
  const [from, setFrom] = useState(""); // datetime-local: the browser's zone
  const [to, setTo] = useState("");
  const [preview, setPreview] = useState<BackfillAnswer>();
  const [made, setMade] = useState<BackfillAnswer>();
  const [error, setError] = useState<Error>();
  const call = (dryRun: boolean) => {
    setError(undefined);
    submit(from ? timestampFromDate(new Date(from)) : undefined, to ? timestampFromDate(new Date(to)) : undefined, dryRun)
      .then((a) => (dryRun ? setPreview(a) : setMade(a)), (e: Error) => setError(e));
  };
  const reset = () => { setPreview(undefined); setMade(undefined); };
  const instants = preview?.instants ?? [];
  return (
    <form aria-label="backfill" className="mb-4 flex flex-wrap items-end gap-3 rounded border border-slate-200 bg-white p-4 text-sm"
      onSubmit={(e) => { e.preventDefault(); setMade(undefined); call(true); }}>
      <span className="font-medium">{title}</span>
      <label className="flex flex-col">{t("jobs.backfillFrom")}
        <input type="datetime-local" name="backfill_from" value={from} onChange={(e) => { setFrom(e.target.value); reset(); }} className="mt-1 rounded border border-slate-300 px-2 py-1" />
      </label>
      <label className="flex flex-col">{t("jobs.backfillTo")}
        <input type="datetime-local" name="backfill_to" value={to} onChange={(e) => { setTo(e.target.value); reset(); }} className="mt-1 rounded border border-slate-300 px-2 py-1" />
      </label>
      <Button type="submit">{t("jobs.backfillPreview")}</Button>
      {preview && !made && (
        <div className="w-full">
          <p role="status">{fill(t("jobs.backfillCount"), { n: instants.length })}</p>
          <ul className="max-h-40 overflow-auto font-mono text-xs" data-testid="backfill-instants">
            {instants.map((i) => <li key={`${i.seconds}`}><Time ts={i} /></li>)}
          </ul>
          {instants.length > 0 && <Button kind="primary" onClick={() => call(false)}>{confirm}</Button>}
        </div>
      )}
      {made && <p role="status" className="w-full">{fill(done, { n: made.made })} <a className="text-indigo-700 underline" href={link}>{t("jobs.runs")}</a></p>}
      <ErrorBox error={error} />
      <Button onClick={onDone}>{t("form.cancel")}</Button>
    </form>
  );
}
