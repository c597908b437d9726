import { useMutation } from "@connectrpc/connect-query";
import { useQueryClient } from "@tanstack/react-query";
import { Suspense, lazy, useState } from "react";
import { BlockStrategy, ScriptType } from "../gen/carillon/v1/executor_pb";
import { AlarmWebhookFormat, JobSchema, JobService, MisfireStrategy, RouteStrategy, type Job } from "../gen/carillon/v1/job_pb";
import { CalendarSelect, GroupSelect, ScheduleInputs, enumOptions, fieldOf, fieldWith, input, int, scheduleFields, scheduleOf, type ScheduleFields } from "../form";
import { useEnum, useT } from "../i18n";
import { tooLong } from "../rules";
import { Button, ErrorBox } from "../ui";

// The code editor is its own chunk, loaded for script jobs only.
const CodeEditor = lazy(() => import("../CodeEditor"));

// Fields is the form's state: every field of a Job, as the inputs hold it.
type Fields = ScheduleFields & {
  groupId: string; name: string; description: string; owner: string; handler: string; param: string; paramTemplate: boolean;
  routeStrategy: number; blockStrategy: number; misfireStrategy: number; timeoutSeconds: string;
  retryCount: string; retryDelaySeconds: string; retryBackoff: boolean; childJobIds: string;
  alarmEmails: string; alarmWebhookUrl: string; alarmEveryFailure: boolean; maxConcurrency: string;
  alarmWebhookFormat: number; alarmWebhookSecret: string; clearWebhookSecret: boolean; alarmWebhookTemplate: string;
  scriptType: number; scriptSource: string; enabled: boolean; calendarIds: string[];
};

function fieldsOf(j?: Job): Fields {
  return {
    groupId: j ? `${j.groupId}` : "", name: j?.name ?? "", description: j?.description ?? "", owner: j?.owner ?? "", handler: j?.handler ?? "",
    param: j?.param ?? "", paramTemplate: j?.paramTemplate ?? false, ...scheduleFields(j?.schedule),
    routeStrategy: j?.routeStrategy || RouteStrategy.FIRST, blockStrategy: j?.blockStrategy || BlockStrategy.SERIAL,
    misfireStrategy: j?.misfireStrategy || MisfireStrategy.DO_NOTHING, timeoutSeconds: `${j?.timeoutSeconds ?? 0}`,
    retryCount: `${j?.retryCount ?? 0}`, retryDelaySeconds: `${j?.retryDelaySeconds ?? 0}`, retryBackoff: j?.retryBackoff ?? false,
    childJobIds: (j?.childJobIds ?? []).join(", "), alarmEmails: (j?.alarmEmails ?? []).join(", "),
    alarmWebhookUrl: j?.alarmWebhookUrl ?? "", alarmEveryFailure: j?.alarmEveryFailure ?? false,
    maxConcurrency: `${j?.maxConcurrency ?? 0}`,
    alarmWebhookFormat: j?.alarmWebhookFormat || AlarmWebhookFormat.JSON, alarmWebhookSecret: "", clearWebhookSecret: false,
    alarmWebhookTemplate: j?.alarmWebhookTemplate ?? "",
    scriptType: j?.script?.type ?? ScriptType.UNSPECIFIED, scriptSource: j?.script?.source ?? "", enabled: j?.enabled ?? false,
    calendarIds: (j?.calendarIds ?? []).map((id) => `${id}`),
  };
}

// outputFields are Job's fields an update may not name in its mask.
const outputFields = new Set(["id", "enabled", "last_fire_at", "next_fire_at", "created_at", "updated_at", "last_run_id", "last_run_status", "has_alarm_webhook_secret"]);
// clearingMask names every input field of Job, the webhook secret
// included: the update that clears the secret (an update without a mask
// keeps a secret it does not set, since reads never return it).
const clearingMask = () => ({ paths: JobSchema.fields.map((x) => x.name).filter((n) => !outputFields.has(n)) });

const list = (s: string) => s.split(",").map((x) => x.trim()).filter(Boolean);
function jobOf(f: Fields, id?: bigint) {
  return {
    id: id ?? 0n, groupId: BigInt(f.groupId || 0), name: f.name, description: f.description, owner: f.owner, handler: f.handler, param: f.param, paramTemplate: f.paramTemplate,
    schedule: scheduleOf(f), routeStrategy: f.routeStrategy, blockStrategy: f.blockStrategy, misfireStrategy: f.misfireStrategy,
    timeoutSeconds: int(f.timeoutSeconds), retryCount: int(f.retryCount), retryDelaySeconds: int(f.retryDelaySeconds),
    retryBackoff: f.retryBackoff, childJobIds: list(f.childJobIds).map((x) => BigInt(x)), alarmEmails: list(f.alarmEmails),
    alarmWebhookUrl: f.alarmWebhookUrl, alarmEveryFailure: f.alarmEveryFailure, maxConcurrency: int(f.maxConcurrency),
    alarmWebhookFormat: f.alarmWebhookFormat, alarmWebhookSecret: f.alarmWebhookSecret,
    alarmWebhookTemplate: f.alarmWebhookFormat === AlarmWebhookFormat.TEMPLATE ? f.alarmWebhookTemplate : "",
    script: f.scriptType ? { type: f.scriptType, source: f.scriptSource } : undefined, enabled: f.enabled,
    calendarIds: f.calendarIds.map((x) => BigInt(x)),
  };
}

// JobForm creates a job (no job, or a copy) or edits one; every field of
// Job, the next 5 fire times in the job's zone as the schedule is typed.
export function JobForm({ job, copy, onDone }: { job?: Job; copy?: boolean; onDone: () => void }) {
  const [t] = useT();
  const text = useEnum();
  const [f, setF] = useState<Fields>(() => {
    const x = fieldsOf(job);
    if (copy) { x.description += " (copy)"; x.enabled = false; x.name = ""; }
    return x;
  });
  const set = <K extends keyof Fields>(k: K, v: Fields[K]) => setF((o) => ({ ...o, [k]: v }));
  const client = useQueryClient();
  const done = { onSuccess: () => { client.invalidateQueries(); onDone(); } };
  const create = useMutation(JobService.method.createJob, done);
  const update = useMutation(JobService.method.updateJob, done);
  const editing = job && !copy;
  // A rule of the .proto broken in the form is said before sending.
  const [local, setLocal] = useState<Error | undefined>();
  const err = local ?? (editing ? update.error : create.error);
  const bad = fieldOf(err);
  const field = fieldWith(bad);
  return (
    <form aria-label={editing ? "edit job" : "new job"} className="mb-4 grid grid-cols-1 gap-3 rounded border border-slate-200 bg-white p-4 md:grid-cols-3"
      onSubmit={(e) => {
        e.preventDefault();
        const j = editing ? jobOf(f, job!.id) : jobOf(f);
        const over = tooLong(JobSchema, j, "job");
        setLocal(over);
        if (over) return;
        if (editing) update.mutate({ job: j, updateMask: f.clearWebhookSecret && !f.alarmWebhookSecret ? clearingMask() : undefined });
        else create.mutate({ job: j });
      }}>
      {field("group_id", t("jobs.group"), <>
        <GroupSelect value={f.groupId} onChange={(v) => set("groupId", v)} />
      </>)}
      {field("name", t("jobs.name"), <><input name="name" title={t("form.nameHint")} value={f.name} onChange={(e) => set("name", e.target.value)} className={`${input} font-mono`} /></>)}
      {field("description", t("jobs.description"), <><input name="description" value={f.description} onChange={(e) => set("description", e.target.value)} className={input} /></>)}
      {field("owner", t("form.owner"), <><input name="owner" value={f.owner} onChange={(e) => set("owner", e.target.value)} className={input} /></>)}
      <ScheduleInputs f={f} change={(c) => setF((o) => ({ ...o, ...c }))} field={field} calendarIds={f.calendarIds.map((x) => BigInt(x))} />
      {field("calendar_ids", t("form.calendars"), <><CalendarSelect value={f.calendarIds} onChange={(v) => set("calendarIds", v)} /></>)}
      {field("handler", t("jobs.handler"), <><input name="handler" value={f.handler} onChange={(e) => set("handler", e.target.value)} className={`${input} font-mono`} /></>)}
      {field("param", t("form.param"), <><textarea name="param" rows={1} value={f.param} onChange={(e) => set("param", e.target.value)} className={`${input} font-mono`} /></>)}
      <div className="text-sm md:col-span-2">
        <label className="flex items-center gap-2"><input type="checkbox" name="param_template" checked={f.paramTemplate} onChange={(e) => set("paramTemplate", e.target.checked)} />{t("form.paramTemplate")}</label>
        {f.paramTemplate && <p className="mt-1 text-xs text-slate-500">{t("form.paramTemplateHelp")} <code className="font-mono">{'{{(.ScheduledAt.AddDate 0 0 -1).Format "20060102"}}'}</code></p>}
      </div>
      {field("route_strategy", t("form.route"), <>
        <select name="route_strategy" value={f.routeStrategy} onChange={(e) => set("routeStrategy", Number(e.target.value))} className={input}>{enumOptions(text, "RouteStrategy", RouteStrategy)}</select>
      </>)}
      {field("block_strategy", t("form.block"), <>
        <select name="block_strategy" value={f.blockStrategy} onChange={(e) => set("blockStrategy", Number(e.target.value))} className={input}>{enumOptions(text, "BlockStrategy", BlockStrategy)}</select>
      </>)}
      {field("misfire_strategy", t("form.misfire"), <>
        <select name="misfire_strategy" value={f.misfireStrategy} onChange={(e) => set("misfireStrategy", Number(e.target.value))} className={input}>{enumOptions(text, "MisfireStrategy", MisfireStrategy)}</select>
      </>)}
      {field("max_concurrency", t("form.maxConcurrency"), <><input name="max_concurrency" inputMode="numeric" title={t("form.maxConcurrencyHint")} value={f.maxConcurrency} onChange={(e) => set("maxConcurrency", e.target.value)} className={input} /></>)}
      {field("timeout_seconds", t("form.timeout"), <><input name="timeout_seconds" inputMode="numeric" value={f.timeoutSeconds} onChange={(e) => set("timeoutSeconds", e.target.value)} className={input} /></>)}
      {field("retry_count", t("form.retries"), <><input name="retry_count" inputMode="numeric" value={f.retryCount} onChange={(e) => set("retryCount", e.target.value)} className={input} /></>)}
      {field("retry_delay_seconds", t("form.retryDelay"), <><input name="retry_delay_seconds" inputMode="numeric" value={f.retryDelaySeconds} onChange={(e) => set("retryDelaySeconds", e.target.value)} className={input} /></>)}
      <label className="flex items-center gap-2 text-sm"><input type="checkbox" checked={f.retryBackoff} onChange={(e) => set("retryBackoff", e.target.checked)} />{t("form.backoff")}</label>
      {field("child_job_ids", t("form.children"), <><input name="child_job_ids" placeholder="3, 7" value={f.childJobIds} onChange={(e) => set("childJobIds", e.target.value)} className={input} /></>)}
      {field("alarm_emails", t("form.emails"), <><input name="alarm_emails" value={f.alarmEmails} onChange={(e) => set("alarmEmails", e.target.value)} className={input} /></>)}
      {field("alarm_webhook_url", t("form.webhook"), <><input name="alarm_webhook_url" value={f.alarmWebhookUrl} onChange={(e) => set("alarmWebhookUrl", e.target.value)} className={input} /></>)}
      <label className="flex items-center gap-2 text-sm"><input type="checkbox" checked={f.alarmEveryFailure} onChange={(e) => set("alarmEveryFailure", e.target.checked)} />{t("form.everyFailure")}</label>
      {field("alarm_webhook_format", t("form.webhookFormat"), <>
        <select name="alarm_webhook_format" value={f.alarmWebhookFormat} onChange={(e) => set("alarmWebhookFormat", Number(e.target.value))} className={input}>{enumOptions(text, "AlarmWebhookFormat", AlarmWebhookFormat)}</select>
      </>)}
      {field("alarm_webhook_secret", t("form.webhookSecret"), <>
        <input name="alarm_webhook_secret" type="password" autoComplete="new-password" title={t("form.webhookSecretHint")} value={f.alarmWebhookSecret}
          placeholder={editing && job!.hasAlarmWebhookSecret && !f.clearWebhookSecret ? t("form.webhookSecretSet") : ""}
          onChange={(e) => set("alarmWebhookSecret", e.target.value)} className={input} />
        {editing && job!.hasAlarmWebhookSecret && (
          <label className="mt-1 flex items-center gap-2 text-xs"><input type="checkbox" name="clear_alarm_webhook_secret" checked={f.clearWebhookSecret} onChange={(e) => set("clearWebhookSecret", e.target.checked)} />{t("form.webhookSecretClear")}</label>
        )}
      </>)}
      {f.alarmWebhookFormat === AlarmWebhookFormat.TEMPLATE && (
        <div className="md:col-span-3">
          {field("alarm_webhook_template", t("form.webhookTemplate"), <>
            <textarea name="alarm_webhook_template" rows={4} value={f.alarmWebhookTemplate} onChange={(e) => set("alarmWebhookTemplate", e.target.value)} className={`${input} font-mono`} />
            <p className="mt-1 text-xs text-slate-500">{t("form.webhookTemplateHelp")} <code className="font-mono">{'{"text": {{json (printf "%s: %s" .JobDescription .Message)}}}'}</code></p>
          </>)}
        </div>
      )}
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
