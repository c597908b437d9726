import { timestampDate } from "@bufbuild/protobuf/wkt";
import { ConnectError } from "@connectrpc/connect";
import { useQuery } from "@connectrpc/connect-query";
import type { ReactNode } from "react";
import { CalendarService } from "./gen/carillon/v1/calendar_pb";
import { GroupService } from "./gen/carillon/v1/group_pb";
import { JobService, ScheduleType, type Schedule } from "./gen/carillon/v1/job_pb";
import { fill, useEnum, useT, type EnumKind } from "./i18n";

// The pieces the job and workflow forms share: a labelled field that
// shows the admin's complaint about it, enum selects, and the schedule's
// fields with a preview of its next fire times.

// input is the classes of a form's inputs.
export const input = "mt-1 rounded border border-slate-300 px-2 py-1";

// fieldOf returns the field an invalid_argument names, in the proto's
// snake_case, to show the message beside its input: the admin names the
// fields of a JSON request as JSON does ("job.timeoutSeconds: ..." ->
// "timeout_seconds"; "workflow.schedule.cron: ..." -> "schedule.cron").
export function fieldOf(err: unknown): [string, string] | undefined {
  if (!err) return undefined;
  const msg = ConnectError.from(err).rawMessage.replace(/^unmarshal message: /, "");
  const m = /^(?:job\.|workflow\.|calendar\.)?([A-Za-z_.]+)(?:\[\d+\])?: (.*)$/s.exec(msg);
  return m ? [m[1].replace(/[A-Z]/g, (c) => "_" + c.toLowerCase()), m[2]] : undefined;
}

// Field labels an input; bad (fieldOf's) is shown under it when it names
// the field or one inside it. It is a function to call, not a component:
// a component made in a render would remount its input on every keystroke.
export type Field = (name: string, label: string, children: ReactNode) => ReactNode;

// fieldWith returns the Field of a form whose last error is bad.
export function fieldWith(bad: [string, string] | undefined): Field {
  return (name, label, children) => (
    <label className="flex flex-col text-sm">
      <span className="font-medium">{label}</span>
      {children}
      {bad && (bad[0] === name || bad[0].startsWith(name + ".")) && <span role="alert" data-field-error={name} className="text-xs text-red-700">{bad[1]}</span>}
    </label>
  );
}

// GroupFilter is a list's group filter: every group ("0") or one.
export function GroupFilter({ value, onChange }: { value: string; onChange: (v: string) => void }) {
  const [t] = useT();
  const groups = useQuery(GroupService.method.listGroups, {});
  return (
    <label>{t("jobs.group")}{" "}
      <select value={value} onChange={(e) => onChange(e.target.value)} className="rounded border border-slate-300 px-2 py-1">
        <option value="0">{t("jobs.all")}</option>
        {groups.data?.groups.map((g) => <option key={`${g.id}`} value={`${g.id}`}>{g.title} ({g.appName})</option>)}
      </select>
    </label>
  );
}

// useGroupNames names each group the user sees by id: its title and app
// name, or the app name alone when they are the same.
export function useGroupNames(): Map<string, string> {
  const groups = useQuery(GroupService.method.listGroups, {});
  return new Map((groups.data?.groups ?? []).map((g) => [`${g.id}`, g.title && g.title !== g.appName ? `${g.title} (${g.appName})` : g.appName]));
}

// enumOptions are the options of an enum's select, said in the current
// language (text is useEnum's), UNSPECIFIED left out.
export function enumOptions(text: ReturnType<typeof useEnum>, kind: EnumKind, e: Record<string, string | number>) {
  return Object.entries(e).filter(([, v]) => typeof v === "number" && v !== 0)
    .map(([k, v]) => <option key={k} value={v as number}>{text(kind, e as unknown as Record<number, string>, v as number)}</option>);
}

// ScheduleFields is a schedule as a form's inputs hold it.
export type ScheduleFields = { scheduleType: number; cron: string; intervalSeconds: string; timeZone: string };

// scheduleFields is s in inputs: every minute by cron when unset.
export function scheduleFields(s?: Schedule): ScheduleFields {
  return { scheduleType: s?.type || ScheduleType.CRON, cron: s?.cron ?? "0 * * * * ?", intervalSeconds: `${s?.intervalSeconds || 60}`, timeZone: s?.timeZone ?? "" };
}

// int is a number input's value: 0 when empty.
export const int = (s: string) => (s.trim() === "" ? 0 : Number(s));

// CalendarSelect picks calendars (their ids) among all of them.
export function CalendarSelect({ value, onChange }: { value: string[]; onChange: (v: string[]) => void }) {
  const cals = useQuery(CalendarService.method.listCalendars, { pageSize: 500 });
  return (
    <select name="calendar_ids" multiple size={Math.min(4, Math.max(2, cals.data?.calendars.length ?? 0))} value={value}
      onChange={(e) => onChange(Array.from(e.target.selectedOptions, (o) => o.value))} className={input}>
      {cals.data?.calendars.map((c) => <option key={`${c.id}`} value={`${c.id}`}>{c.name}</option>)}
    </select>
  );
}

// GroupSelect picks one of the executor groups the user sees (the value
// is its id, "" for none yet).
export function GroupSelect({ value, onChange }: { value: string; onChange: (v: string) => void }) {
  const groups = useQuery(GroupService.method.listGroups, {});
  return (
    <select name="group_id" required value={value} onChange={(e) => onChange(e.target.value)} className={input}>
      <option value="">—</option>
      {groups.data?.groups.map((g) => <option key={`${g.id}`} value={`${g.id}`}>{g.title} ({g.appName})</option>)}
    </select>
  );
}

// scheduleOf is the Schedule of the inputs.
export function scheduleOf(f: ScheduleFields) {
  return { type: f.scheduleType, cron: f.scheduleType === ScheduleType.CRON ? f.cron : "", timeZone: f.timeZone,
    intervalSeconds: f.scheduleType === ScheduleType.FIX_RATE || f.scheduleType === ScheduleType.FIX_DELAY ? int(f.intervalSeconds) : 0 };
}

// scheduleText says a schedule in a table's cell.
export function scheduleText(s: Schedule | undefined, t: ReturnType<typeof useT>[0]): string {
  if (!s) return "—";
  switch (s.type) {
    case ScheduleType.CRON:
      return `${s.cron}${s.timeZone ? ` (${s.timeZone})` : ""}`;
    case ScheduleType.FIX_RATE:
      return fill(t("schedule.every"), { n: s.intervalSeconds });
    case ScheduleType.FIX_DELAY:
      return fill(t("schedule.after"), { n: s.intervalSeconds });
    default:
      return "—";
  }
}

// ScheduleInputs are the schedule's inputs (type; cron or interval; time
// zone) and the next 5 fire times in its zone as it is typed, as cells of
// the form's grid; change sets what an input changed.
// calendarIds, a job's, are skipped by the preview as by the schedule.
export function ScheduleInputs({ f, change, field, calendarIds }: { f: ScheduleFields; change: (c: Partial<ScheduleFields>) => void; field: Field; calendarIds?: bigint[] }) {
  const [t] = useT();
  const text = useEnum();
  const preview = useQuery(JobService.method.previewSchedule, { schedule: scheduleOf(f), count: 5, calendarIds: calendarIds ?? [] },
    { enabled: f.scheduleType !== ScheduleType.NONE, placeholderData: (p) => p });
  const zone = f.timeZone || Intl.DateTimeFormat().resolvedOptions().timeZone;
  return <>
    {field("schedule.type", t("form.scheduleType"), <>
      <select name="schedule_type" value={f.scheduleType} onChange={(e) => change({ scheduleType: Number(e.target.value) })} className={input}>{enumOptions(text, "ScheduleType", ScheduleType)}</select>
    </>)}
    {f.scheduleType === ScheduleType.CRON && (
      field("schedule.cron", t("form.cron"), <><input name="cron" value={f.cron} onChange={(e) => change({ cron: e.target.value })} className={`${input} font-mono`} /></>)
    )}
    {(f.scheduleType === ScheduleType.FIX_RATE || f.scheduleType === ScheduleType.FIX_DELAY) && (
      field("schedule.interval_seconds", t("form.interval"), <><input name="interval_seconds" inputMode="numeric" value={f.intervalSeconds} onChange={(e) => change({ intervalSeconds: e.target.value })} className={input} /></>)
    )}
    {field("schedule.time_zone", t("form.timeZone"), <><input name="time_zone" placeholder={zone} value={f.timeZone} onChange={(e) => change({ timeZone: e.target.value })} className={input} /></>)}
    {f.scheduleType !== ScheduleType.NONE && (
      <div className="text-sm md:col-span-3" aria-live="polite">
        <span className="font-medium">{t("form.preview")} ({zone}): </span>
        {preview.error ? <span data-testid="preview-error" className="text-red-700">{ConnectError.from(preview.error).rawMessage}</span> : (
          <ol data-testid="preview" className="inline">
            {preview.data?.fireTimes.map((ts, i) => {
              const d = timestampDate(ts);
              return <li key={i} className="mr-3 inline font-mono text-xs" title={d.toISOString()}>{d.toLocaleString(undefined, { timeZone: zone })}</li>;
            })}
          </ol>
        )}
        {preview.data?.calendarNote && <span data-testid="preview-note" className="text-amber-700">{preview.data.calendarNote}</span>}
      </div>
    )}
  </>;
}
