import { timestampDate } from "@bufbuild/protobuf/wkt";
import { ConnectError } from "@connectrpc/connect";
import { useMutation, useQuery } from "@connectrpc/connect-query";
import { useQueryClient } from "@tanstack/react-query";
import { Suspense, lazy, useState, type ReactNode } from "react";
import { BlockStrategy, ScriptType } from "../gen/carillon/v1/executor_pb";
import { GroupService } from "../gen/carillon/v1/group_pb";
import { JobService, MisfireStrategy, RouteStrategy, ScheduleType, type Job } from "../gen/carillon/v1/job_pb";
import { useEnum, useT, type EnumKind } from "../i18n";
import { Button, ErrorBox } from "../ui";

// The code editor is its own chunk, loaded for script jobs only.
const CodeEditor = lazy(() => import("../CodeEditor"));

// Fields is the form's state: every field of a Job, as the inputs hold it.
type Fields = {
  groupId: string; description: string; owner: string; handler: string; param: string;
  scheduleType: number; cron: string; intervalSeconds: string; timeZone: string;
  routeStrategy: number; blockStrategy: number; misfireStrategy: number; timeoutSeconds: string;
  retryCount: string; retryDelaySeconds: string; retryBackoff: boolean; childJobIds: string;
  alarmEmails: string; alarmWebhookUrl: string; alarmEveryFailure: boolean;
  scriptType: number; scriptSource: string; enabled: boolean;
};

function fieldsOf(j?: Job): Fields {
  return {
    groupId: j ? `${j.groupId}` : "", description: j?.description ?? "", owner: j?.owner ?? "", handler: j?.handler ?? "",
    param: j?.param ?? "", scheduleType: j?.schedule?.type || ScheduleType.CRON, cron: j?.schedule?.cron ?? "0 * * * * ?",
    intervalSeconds: `${j?.schedule?.intervalSeconds || 60}`, timeZone: j?.schedule?.timeZone ?? "",
    routeStrategy: j?.routeStrategy || RouteStrategy.FIRST, blockStrategy: j?.blockStrategy || BlockStrategy.SERIAL,
    misfireStrategy: j?.misfireStrategy || MisfireStrategy.DO_NOTHING, timeoutSeconds: `${j?.timeoutSeconds ?? 0}`,
    retryCount: `${j?.retryCount ?? 0}`, retryDelaySeconds: `${j?.retryDelaySeconds ?? 0}`, retryBackoff: j?.retryBackoff ?? false,
    childJobIds: (j?.childJobIds ?? []).join(", "), alarmEmails: (j?.alarmEmails ?? []).join(", "),
    alarmWebhookUrl: j?.alarmWebhookUrl ?? "", alarmEveryFailure: j?.alarmEveryFailure ?? false,
    scriptType: j?.script?.type ?? ScriptType.UNSPECIFIED, scriptSource: j?.script?.source ?? "", enabled: j?.enabled ?? false,
  };
}

const list = (s: string) => s.split(",").map((x) => x.trim()).filter(Boolean);
const int = (s: string) => (s.trim() === "" ? 0 : Number(s));

function schedule(f: Fields) {
  return { type: f.scheduleType, cron: f.scheduleType === ScheduleType.CRON ? f.cron : "", timeZone: f.timeZone,
    intervalSeconds: f.scheduleType === ScheduleType.FIX_RATE || f.scheduleType === ScheduleType.FIX_DELAY ? int(f.intervalSeconds) : 0 };
}

function jobOf(f: Fields, id?: bigint) {
  return {
    id: id ?? 0n, groupId: BigInt(f.groupId || 0), description: f.description, owner: f.owner, handler: f.handler, param: f.param,
    schedule: schedule(f), routeStrategy: f.routeStrategy, blockStrategy: f.blockStrategy, misfireStrategy: f.misfireStrategy,
    timeoutSeconds: int(f.timeoutSeconds), retryCount: int(f.retryCount), retryDelaySeconds: int(f.retryDelaySeconds),
    retryBackoff: f.retryBackoff, childJobIds: list(f.childJobIds).map((x) => BigInt(x)), alarmEmails: list(f.alarmEmails),
    alarmWebhookUrl: f.alarmWebhookUrl, alarmEveryFailure: f.alarmEveryFailure,
    script: f.scriptType ? { type: f.scriptType, source: f.scriptSource } : undefined, enabled: f.enabled,
  };
}

// fieldOf returns the field an invalid_argument names, in the proto's
// snake_case, to show the message beside its input: the admin names the
// fields of a JSON request as JSON does ("job.timeoutSeconds: ..." ->
// "timeout_seconds"; "job.schedule.cron: ..." -> "schedule.cron").
export function fieldOf(err: unknown): [string, string] | undefined {
  if (!err) return undefined;
  const msg = ConnectError.from(err).rawMessage.replace(/^unmarshal message: /, "");
  const m = /^(?:job\.)?([A-Za-z_.]+)(?:\[\d+\])?: (.*)$/s.exec(msg);
  return m ? [m[1].replace(/[A-Z]/g, (c) => "_" + c.toLowerCase()), m[2]] : undefined;
}

// enumOptions are the options of an enum's select, said in the current
// language (text is useEnum's).
function enumOptions(text: ReturnType<typeof useEnum>, kind: EnumKind, e: Record<string, string | number>) {
  return Object.entries(e).filter(([, v]) => typeof v === "number" && v !== 0)
    .map(([k, v]) => <option key={k} value={v as number}>{text(kind, e as unknown as Record<number, string>, v as number)}</option>);
}

// JobForm creates a job (no job, or a copy) or edits one; every field of
// Job, the next 5 fire times in the job's zone as the schedule is typed.
export function JobForm({ job, copy, onDone }: { job?: Job; copy?: boolean; onDone: () => void }) {
  const [t] = useT();
  const text = useEnum();
  const [f, setF] = useState<Fields>(() => {
    const x = fieldsOf(job);
    if (copy) { x.description += " (copy)"; x.enabled = false; }
    return x;
  });
  const set = <K extends keyof Fields>(k: K, v: Fields[K]) => setF((o) => ({ ...o, [k]: v }));
  const groups = useQuery(GroupService.method.listGroups, {});
  const preview = useQuery(JobService.method.previewSchedule, { schedule: schedule(f), count: 5 },
    { enabled: f.scheduleType !== ScheduleType.NONE, placeholderData: (p) => p });
  const client = useQueryClient();
  const done = { onSuccess: () => { client.invalidateQueries(); onDone(); } };
  const create = useMutation(JobService.method.createJob, done);
  const update = useMutation(JobService.method.updateJob, done);
  const editing = job && !copy;
  const err = editing ? update.error : create.error;
  const bad = fieldOf(err);
  // field is called, not rendered as a component: a component made in the
  // render would remount its input on every keystroke.
  const field = (name: string, label: string, children: ReactNode) => (
    <label className="flex flex-col text-sm">
      <span className="font-medium">{label}</span>
      {children}
      {bad && (bad[0] === name || bad[0].startsWith(name + ".")) && <span role="alert" data-field-error={name} className="text-xs text-red-700">{bad[1]}</span>}
    </label>
  );
  const input = "mt-1 rounded border border-slate-300 px-2 py-1";
  const zone = f.timeZone || Intl.DateTimeFormat().resolvedOptions().timeZone;
  return (
    <form aria-label={editing ? "edit job" : "new job"} className="mb-4 grid grid-cols-1 gap-3 rounded border border-slate-200 bg-white p-4 md:grid-cols-3"
      onSubmit={(e) => {
        e.preventDefault();
        if (editing) update.mutate({ job: jobOf(f, job!.id) });
        else create.mutate({ job: jobOf(f) });
      }}>
      {field("group_id", t("jobs.group"), <>
        <select name="group_id" required value={f.groupId} onChange={(e) => set("groupId", e.target.value)} className={input}>
          <option value="">—</option>
          {groups.data?.groups.map((g) => <option key={`${g.id}`} value={`${g.id}`}>{g.title} ({g.appName})</option>)}
        </select>
      </>)}
      {field("description", t("jobs.description"), <><input name="description" value={f.description} onChange={(e) => set("description", e.target.value)} className={input} /></>)}
      {field("owner", t("form.owner"), <><input name="owner" value={f.owner} onChange={(e) => set("owner", e.target.value)} className={input} /></>)}
      {field("schedule.type", t("form.scheduleType"), <>
        <select name="schedule_type" value={f.scheduleType} onChange={(e) => set("scheduleType", Number(e.target.value))} className={input}>{enumOptions(text, "ScheduleType", ScheduleType)}</select>
      </>)}
      {f.scheduleType === ScheduleType.CRON && (
        field("schedule.cron", t("form.cron"), <><input name="cron" value={f.cron} onChange={(e) => set("cron", e.target.value)} className={`${input} font-mono`} /></>)
      )}
      {(f.scheduleType === ScheduleType.FIX_RATE || f.scheduleType === ScheduleType.FIX_DELAY) && (
        field("schedule.interval_seconds", t("form.interval"), <><input name="interval_seconds" inputMode="numeric" value={f.intervalSeconds} onChange={(e) => set("intervalSeconds", e.target.value)} className={input} /></>)
      )}
      {field("schedule.time_zone", t("form.timeZone"), <><input name="time_zone" placeholder={zone} value={f.timeZone} onChange={(e) => set("timeZone", e.target.value)} className={input} /></>)}
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
        </div>
      )}
      {field("handler", t("jobs.handler"), <><input name="handler" value={f.handler} onChange={(e) => set("handler", e.target.value)} className={`${input} font-mono`} /></>)}
      {field("param", t("form.param"), <><textarea name="param" rows={1} value={f.param} onChange={(e) => set("param", e.target.value)} className={`${input} font-mono`} /></>)}
      {field("route_strategy", t("form.route"), <>
        <select name="route_strategy" value={f.routeStrategy} onChange={(e) => set("routeStrategy", Number(e.target.value))} className={input}>{enumOptions(text, "RouteStrategy", RouteStrategy)}</select>
      </>)}
      {field("block_strategy", t("form.block"), <>
        <select name="block_strategy" value={f.blockStrategy} onChange={(e) => set("blockStrategy", Number(e.target.value))} className={input}>{enumOptions(text, "BlockStrategy", BlockStrategy)}</select>
      </>)}
      {field("misfire_strategy", t("form.misfire"), <>
        <select name="misfire_strategy" value={f.misfireStrategy} onChange={(e) => set("misfireStrategy", Number(e.target.value))} className={input}>{enumOptions(text, "MisfireStrategy", MisfireStrategy)}</select>
      </>)}
      {field("timeout_seconds", t("form.timeout"), <><input name="timeout_seconds" inputMode="numeric" value={f.timeoutSeconds} onChange={(e) => set("timeoutSeconds", e.target.value)} className={input} /></>)}
      {field("retry_count", t("form.retries"), <><input name="retry_count" inputMode="numeric" value={f.retryCount} onChange={(e) => set("retryCount", e.target.value)} className={input} /></>)}
      {field("retry_delay_seconds", t("form.retryDelay"), <><input name="retry_delay_seconds" inputMode="numeric" value={f.retryDelaySeconds} onChange={(e) => set("retryDelaySeconds", e.target.value)} className={input} /></>)}
      <label className="flex items-center gap-2 text-sm"><input type="checkbox" checked={f.retryBackoff} onChange={(e) => set("retryBackoff", e.target.checked)} />{t("form.backoff")}</label>
      {field("child_job_ids", t("form.children"), <><input name="child_job_ids" placeholder="3, 7" value={f.childJobIds} onChange={(e) => set("childJobIds", e.target.value)} className={input} /></>)}
      {field("alarm_emails", t("form.emails"), <><input name="alarm_emails" value={f.alarmEmails} onChange={(e) => set("alarmEmails", e.target.value)} className={input} /></>)}
      {field("alarm_webhook_url", t("form.webhook"), <><input name="alarm_webhook_url" value={f.alarmWebhookUrl} onChange={(e) => set("alarmWebhookUrl", e.target.value)} className={input} /></>)}
      <label className="flex items-center gap-2 text-sm"><input type="checkbox" checked={f.alarmEveryFailure} onChange={(e) => set("alarmEveryFailure", e.target.checked)} />{t("form.everyFailure")}</label>
      {field("script.type", t("form.scriptType"), <>
        <select name="script_type" value={f.scriptType} onChange={(e) => set("scriptType", Number(e.target.value))} className={input}>
          <option value={0}>—</option>{enumOptions(text, "ScriptType", ScriptType)}
        </select>
      </>)}
      {f.scriptType !== 0 && (
        <div className="md:col-span-3">
          {field("script.source", t("form.script"), <>
            <Suspense fallback={<span>{t("loading")}</span>}>
              <CodeEditor type={f.scriptType} value={f.scriptSource} onChange={(v) => set("scriptSource", v)} />
            </Suspense>
          </>)}
        </div>
      )}
      {!editing && <label className="flex items-center gap-2 text-sm"><input type="checkbox" checked={f.enabled} onChange={(e) => set("enabled", e.target.checked)} />{t("form.startNow")}</label>}
      <div className="flex items-center gap-2 md:col-span-3">
        {err && !bad && <ErrorBox error={err} />}
        <Button type="submit" kind="primary">{editing ? t("form.save") : t("form.create")}</Button>
        <Button onClick={onDone}>{t("form.cancel")}</Button>
      </div>
    </form>
  );
}
