import { useMutation, useQuery } from "@connectrpc/connect-query";
import { useQueryClient } from "@tanstack/react-query";
import { useState } from "react";
import { CalendarKind, CalendarService, type Calendar } from "../gen/carillon/v1/calendar_pb";
import { enumOptions, fieldOf, fieldWith, input } from "../form";
import { useEnum, useT } from "../i18n";
import { Button, ErrorBox, Table, Time, wrap } from "../ui";

const weekdays = ["MON", "TUE", "WED", "THU", "FRI", "SAT", "SUN"];

// excludes says what a calendar excludes, in a table's cell.
function excludes(c: Calendar, t: ReturnType<typeof useT>[0]): string {
  switch (c.kind) {
    case CalendarKind.HOLIDAY:
      return c.excludedDates.join(", ");
    case CalendarKind.ANNUAL:
      return `${t("cal.every")} ${c.excludedDays.join(", ")}`;
    case CalendarKind.WEEKLY:
      return c.excludedWeekdays.join(", ");
    case CalendarKind.DAILY:
      return `${c.invert ? t("cal.allBut") + " " : ""}${c.rangeStart}–${c.rangeEnd}`;
    case CalendarKind.CRON:
      return c.cron;
    default:
      return "—";
  }
}

// Calendars lists the calendars, which every user reads (a job's form
// picks among them); an ADMIN creates, edits and deletes them. Deleting
// one that jobs use is refused, naming them.
export function Calendars({ isAdmin }: { isAdmin: boolean }) {
  const [t] = useT();
  const text = useEnum();
  const q = useQuery(CalendarService.method.listCalendars, { pageSize: 500 });
  const [edit, setEdit] = useState<Calendar | "new" | null>(null);
  const [confirm, setConfirm] = useState<bigint | null>(null);
  const client = useQueryClient();
  const del = useMutation(CalendarService.method.deleteCalendar, { onSuccess: () => client.invalidateQueries() });
  return (
    <section>
      <div className="mb-3 flex items-center gap-3">
        <h1 className="text-lg font-semibold">{t("nav.calendars")}</h1>
        {isAdmin && !edit && <Button kind="primary" onClick={() => setEdit("new")}>{t("cal.new")}</Button>}
      </div>
      <p className="mb-3 text-sm text-slate-600">{t("cal.quartz")}</p>
      {edit && <CalendarForm calendar={edit === "new" ? undefined : edit} onDone={() => setEdit(null)} />}
      <ErrorBox error={q.error ?? del.error} />
      <Table head={["ID", t("cal.name"), t("cal.kind"), t("form.timeZone"), t("cal.excludes"), t("groups.updated"), ""]}>
        {q.data?.calendars.map((c) => (
          <tr key={`${c.id}`} data-testid={`calendar-${c.name}`}>
            <td className="px-3 py-2">{`${c.id}`}</td>
            <td className={`px-3 py-2 ${wrap}`} title={c.description}>{c.name}</td>
            <td className="px-3 py-2">{text("CalendarKind", CalendarKind, c.kind)}</td>
            <td className="px-3 py-2">{c.timeZone || "—"}</td>
            <td className={`px-3 py-2 font-mono text-xs ${wrap}`}>{excludes(c, t)}</td>
            <td className="px-3 py-2 text-xs text-slate-500"><Time ts={c.updatedAt} /></td>
            <td className="px-3 py-2"><div className="flex gap-1 whitespace-nowrap">
              {isAdmin && <Button onClick={() => setEdit(c)}>{t("jobs.edit")}</Button>}
              {isAdmin && (confirm === c.id
                ? <Button kind="danger" onClick={() => { setConfirm(null); del.mutate({ id: c.id }); }}>{t("jobs.confirmDelete")}</Button>
                : <Button onClick={() => setConfirm(c.id)}>{t("jobs.delete")}</Button>)}
            </div></td>
          </tr>
        ))}
      </Table>
    </section>
  );
}

const lines = (s: string) => s.split(/[\s,]+/).filter(Boolean);

// CalendarForm creates a calendar or edits one: its kind, then the kind's
// fields; the admin's complaint shows under the field it names.
function CalendarForm({ calendar, onDone }: { calendar?: Calendar; onDone: () => void }) {
  const [t] = useT();
  const text = useEnum();
  const [name, setName] = useState(calendar?.name ?? "");
  const [description, setDescription] = useState(calendar?.description ?? "");
  const [kind, setKind] = useState(calendar?.kind || CalendarKind.HOLIDAY);
  const [zone, setZone] = useState(calendar?.timeZone ?? "");
  const [dates, setDates] = useState((calendar?.excludedDates ?? []).join("\n"));
  const [days, setDays] = useState((calendar?.excludedDays ?? []).join("\n"));
  const [wdays, setWdays] = useState<string[]>(calendar?.excludedWeekdays ?? ["SAT", "SUN"]);
  const [rangeStart, setRangeStart] = useState(calendar?.rangeStart ?? "09:00");
  const [rangeEnd, setRangeEnd] = useState(calendar?.rangeEnd ?? "17:00");
  const [invert, setInvert] = useState(calendar?.invert ?? false);
  const [cron, setCron] = useState(calendar?.cron ?? "* * 0-6 ? * MON-FRI");
  const client = useQueryClient();
  const done = { onSuccess: () => { client.invalidateQueries(); onDone(); } };
  const create = useMutation(CalendarService.method.createCalendar, done);
  const update = useMutation(CalendarService.method.updateCalendar, done);
  const err = calendar ? update.error : create.error;
  const bad = fieldOf(err);
  const field = fieldWith(bad);
  // Only the kind's fields are sent: the admin refuses another kind's.
  const c = {
    id: calendar?.id ?? 0n, name, description, kind, timeZone: zone,
    excludedDates: kind === CalendarKind.HOLIDAY ? lines(dates) : [],
    excludedDays: kind === CalendarKind.ANNUAL ? lines(days) : [],
    excludedWeekdays: kind === CalendarKind.WEEKLY ? weekdays.filter((d) => wdays.includes(d)) : [],
    rangeStart: kind === CalendarKind.DAILY ? rangeStart : "", rangeEnd: kind === CalendarKind.DAILY ? rangeEnd : "",
    invert: kind === CalendarKind.DAILY && invert, cron: kind === CalendarKind.CRON ? cron : "",
  };
  return (
    <form aria-label="calendar" className="mb-4 grid grid-cols-1 gap-3 rounded border border-slate-200 bg-white p-4 text-sm md:grid-cols-3"
      onSubmit={(e) => { e.preventDefault(); if (calendar) update.mutate({ calendar: c }); else create.mutate({ calendar: c }); }}>
      {field("name", t("cal.name"), <><input name="name" value={name} onChange={(e) => setName(e.target.value)} className={input} /></>)}
      {field("kind", t("cal.kind"), <>
        <select name="kind" value={kind} onChange={(e) => setKind(Number(e.target.value))} className={input}>{enumOptions(text, "CalendarKind", CalendarKind)}</select>
      </>)}
      {field("time_zone", t("cal.zone"), <><input name="time_zone" placeholder={Intl.DateTimeFormat().resolvedOptions().timeZone} value={zone} onChange={(e) => setZone(e.target.value)} className={input} /></>)}
      {field("description", t("cal.description"), <><input name="description" value={description} onChange={(e) => setDescription(e.target.value)} className={input} /></>)}
      {kind === CalendarKind.HOLIDAY && <div className="md:col-span-2">{field("excluded_dates", t("cal.dates"), <>
        <textarea name="excluded_dates" rows={4} value={dates} onChange={(e) => setDates(e.target.value)} className={`${input} font-mono`} placeholder={"2026-12-25\n2027-01-01"} />
      </>)}</div>}
      {kind === CalendarKind.ANNUAL && <div className="md:col-span-2">{field("excluded_days", t("cal.days"), <>
        <textarea name="excluded_days" rows={4} value={days} onChange={(e) => setDays(e.target.value)} className={`${input} font-mono`} placeholder={"12-25\n01-01"} />
      </>)}</div>}
      {kind === CalendarKind.WEEKLY && <div className="md:col-span-2">{field("excluded_weekdays", t("cal.weekdays"), <>
        <span className="mt-1 flex flex-wrap gap-3">{weekdays.map((d) => (
          <span key={d} className="flex items-center gap-1">
            <input type="checkbox" name={`weekday-${d}`} aria-label={d} checked={wdays.includes(d)}
              onChange={(e) => setWdays((w) => (e.target.checked ? [...w, d] : w.filter((x) => x !== d)))} />{d}
          </span>))}
        </span>
      </>)}</div>}
      {kind === CalendarKind.DAILY && <>
        {field("range_start", t("cal.rangeStart"), <><input name="range_start" value={rangeStart} onChange={(e) => setRangeStart(e.target.value)} className={`${input} font-mono`} /></>)}
        {field("range_end", t("cal.rangeEnd"), <><input name="range_end" value={rangeEnd} onChange={(e) => setRangeEnd(e.target.value)} className={`${input} font-mono`} /></>)}
        <label className="flex items-center gap-2"><input type="checkbox" name="invert" checked={invert} onChange={(e) => setInvert(e.target.checked)} />{t("cal.invert")}</label>
      </>}
      {kind === CalendarKind.CRON && <div className="md:col-span-2">{field("cron", t("cal.cron"), <>
        <input name="cron" value={cron} onChange={(e) => setCron(e.target.value)} className={`${input} font-mono`} />
      </>)}</div>}
      <div className="flex gap-2 md:col-span-3">
        {err && !bad && <ErrorBox error={err} />}
        <Button type="submit" kind="primary">{calendar ? t("form.save") : t("form.create")}</Button>
        <Button onClick={onDone}>{t("form.cancel")}</Button>
      </div>
    </form>
  );
}
