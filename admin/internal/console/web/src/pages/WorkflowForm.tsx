import { useMutation, useQuery } from "@connectrpc/connect-query";
import { useQueryClient } from "@tanstack/react-query";
import { useState } from "react";
import DagGraph from "../DagGraph";
import { GroupSelect, ScheduleInputs, enumOptions, fieldOf, fieldWith, input, scheduleFields, scheduleOf, type ScheduleFields } from "../form";
import { BlockStrategy } from "../gen/carillon/v1/executor_pb";
import { JobService, MisfireStrategy, type Job } from "../gen/carillon/v1/job_pb";
import { WorkflowSchema, WorkflowService, type Workflow } from "../gen/carillon/v1/workflow_pb";
import { useEnum, useT } from "../i18n";
import { tooLong } from "../rules";
import { Button, ErrorBox, Table, wrap } from "../ui";

// NodeFields is a node as the editor holds it: uid names it in the form
// (its key may be edited, or be a duplicate until fixed), parents are the
// uids of the nodes it runs after.
type NodeFields = { uid: number; key: string; jobId: bigint; parents: number[]; param: string };

type Fields = ScheduleFields & {
  groupId: string; name: string; description: string; misfireStrategy: number; blockStrategy: number; enabled: boolean;
  alarmEmails: string; alarmWebhookUrl: string; nodes: NodeFields[];
};

function fieldsOf(w?: Workflow): Fields {
  const nodes = (w?.nodes ?? []).map((n, i) => ({ uid: i + 1, key: n.key, jobId: n.jobId, parents: [] as number[], param: n.param ?? "" }));
  const uidOf = new Map(nodes.map((n) => [n.key, n.uid]));
  (w?.nodes ?? []).forEach((n, i) => { nodes[i].parents = n.dependsOn.map((k) => uidOf.get(k)).filter((u): u is number => u !== undefined); });
  return {
    groupId: w ? `${w.groupId}` : "", name: w?.name ?? "", description: w?.description ?? "", ...scheduleFields(w?.schedule),
    misfireStrategy: w?.misfireStrategy || MisfireStrategy.DO_NOTHING, blockStrategy: w?.blockStrategy || BlockStrategy.SERIAL,
    enabled: w?.enabled ?? false, alarmEmails: (w?.alarmEmails ?? []).join(", "), alarmWebhookUrl: w?.alarmWebhookUrl ?? "", nodes,
  };
}

function workflowOf(f: Fields, id?: bigint) {
  const keyOf = new Map(f.nodes.map((n) => [n.uid, n.key]));
  return {
    id: id ?? 0n, groupId: BigInt(f.groupId || 0), name: f.name, description: f.description, schedule: scheduleOf(f),
    misfireStrategy: f.misfireStrategy, blockStrategy: f.blockStrategy, enabled: f.enabled,
    alarmEmails: f.alarmEmails.split(",").map((s) => s.trim()).filter(Boolean), alarmWebhookUrl: f.alarmWebhookUrl,
    nodes: f.nodes.map((n) => ({ key: n.key, jobId: n.jobId, dependsOn: n.parents.map((u) => keyOf.get(u)!), param: n.param === "" ? undefined : n.param })),
  };
}

// keyFor makes a node's key from its job's description (or handler):
// the characters a key allows, unique among taken.
export function keyFor(j: Job, taken: Set<string>): string {
  const base = (j.description || j.handler || `job${j.id}`).replace(/[^A-Za-z0-9_.-]+/g, "_").replace(/^_+|_+$/g, "").slice(0, 60) || `job${j.id}`;
  let key = base;
  for (let i = 2; taken.has(key); i++) key = `${base}_${i}`;
  return key;
}

// jobLabel says a job in a select or a node: its id and description.
export const jobLabel = (j: Job | undefined, id: bigint) => (j ? `#${j.id} ${j.description || j.handler}` : `#${id}`);

// WorkflowForm creates a workflow (none given) or edits one: its group,
// name, schedule and strategies, and its nodes, each added by picking a
// job, its dependencies by ticking the nodes it runs after; the graph is
// drawn as it is edited.
export function WorkflowForm({ workflow, onDone }: { workflow?: Workflow; onDone: () => void }) {
  const [t] = useT();
  const text = useEnum();
  const [f, setF] = useState<Fields>(() => fieldsOf(workflow));
  const set = <K extends keyof Fields>(k: K, v: Fields[K]) => setF((o) => ({ ...o, [k]: v }));
  const setNode = (uid: number, change: Partial<NodeFields>) => setF((o) => ({ ...o, nodes: o.nodes.map((n) => (n.uid === uid ? { ...n, ...change } : n)) }));
  const [find, setFind] = useState("");
  const [pick, setPick] = useState("");
  const found = useQuery(JobService.method.listJobs, { text: find, pageSize: 500 });
  const all = useQuery(JobService.method.listJobs, { pageSize: 500 });
  const jobs = new Map([...(all.data?.jobs ?? []), ...(found.data?.jobs ?? [])].map((j) => [j.id, j]));
  const client = useQueryClient();
  const done = { onSuccess: () => { client.invalidateQueries(); onDone(); } };
  const create = useMutation(WorkflowService.method.createWorkflow, done);
  const update = useMutation(WorkflowService.method.updateWorkflow, done);
  const editing = !!workflow;
  // A rule of the .proto broken in the form is said before sending.
  const [local, setLocal] = useState<Error | undefined>();
  const err = local ?? (editing ? update.error : create.error);
  const bad = fieldOf(err);
  const field = fieldWith(bad);
  // An error about a field with an input is said beside it; any other
  // (a node's: a cycle, an unknown key or job) below the graph.
  const beside = bad && /^(group_id|name|description|schedule|misfire_strategy|block_strategy|alarm_emails|alarm_webhook_url)\b/.test(bad[0]);
  const add = () => {
    const j = jobs.get(BigInt(pick || 0));
    if (!j) return;
    setF((o) => ({ ...o, nodes: [...o.nodes, {
      uid: Math.max(0, ...o.nodes.map((n) => n.uid)) + 1, key: keyFor(j, new Set(o.nodes.map((n) => n.key))), jobId: j.id, parents: [], param: "",
    }] }));
  };
  const remove = (uid: number) => setF((o) => ({ ...o, nodes: o.nodes.filter((n) => n.uid !== uid).map((n) => ({ ...n, parents: n.parents.filter((p) => p !== uid) })) }));
  // The graph names a node by its key, or by key#uid while the key is
  // empty or taken by an earlier node, so that each is drawn.
  const seen = new Set<string>();
  const gid = new Map(f.nodes.map((n) => {
    const id = n.key && !seen.has(n.key) ? n.key : `${n.key}#${n.uid}`;
    seen.add(n.key);
    return [n.uid, id];
  }));
  return (
    <form aria-label={editing ? "edit workflow" : "new workflow"} className="mb-4 grid grid-cols-1 gap-3 rounded border border-slate-200 bg-white p-4 md:grid-cols-3"
      onSubmit={(e) => {
        e.preventDefault();
        const w = editing ? workflowOf(f, workflow.id) : workflowOf(f);
        const over = tooLong(WorkflowSchema, w, "workflow");
        setLocal(over);
        if (over) return;
        if (editing) update.mutate({ workflow: w });
        else create.mutate({ workflow: w });
      }}>
      {field("group_id", t("jobs.group"), <GroupSelect value={f.groupId} onChange={(v) => set("groupId", v)} />)}
      {field("name", t("wf.name"), <input name="name" required value={f.name} onChange={(e) => set("name", e.target.value)} className={input} />)}
      {field("description", t("jobs.description"), <input name="description" value={f.description} onChange={(e) => set("description", e.target.value)} className={input} />)}
      <ScheduleInputs f={f} change={(c) => setF((o) => ({ ...o, ...c }))} field={field} />
      {field("misfire_strategy", t("form.misfire"),
        <select name="misfire_strategy" value={f.misfireStrategy} onChange={(e) => set("misfireStrategy", Number(e.target.value))} className={input}>{enumOptions(text, "MisfireStrategy", MisfireStrategy)}</select>)}
      {field("block_strategy", t("form.block"),
        <select name="block_strategy" value={f.blockStrategy} onChange={(e) => set("blockStrategy", Number(e.target.value))} className={input}>{enumOptions(text, "BlockStrategy", BlockStrategy)}</select>)}
      {field("alarm_emails", t("form.emails"), <input name="alarm_emails" value={f.alarmEmails} onChange={(e) => set("alarmEmails", e.target.value)} className={input} />)}
      {field("alarm_webhook_url", t("form.webhook"), <input name="alarm_webhook_url" value={f.alarmWebhookUrl} onChange={(e) => set("alarmWebhookUrl", e.target.value)} className={input} />)}
      {!editing && <label className="flex items-center gap-2 text-sm"><input type="checkbox" checked={f.enabled} onChange={(e) => set("enabled", e.target.checked)} />{t("form.startNow")}</label>}

      <fieldset className="md:col-span-3">
        <legend className="mb-2 text-sm font-semibold">{t("wf.nodes")}</legend>
        <div className="mb-2 flex flex-wrap items-end gap-3 text-sm">
          <label className="flex flex-col">{t("wf.findJob")}
            <input name="find_job" value={find} onChange={(e) => setFind(e.target.value)} className={input} />
          </label>
          <label className="flex flex-col">{t("wf.addJob")}
            <select name="add_job" value={pick} onChange={(e) => setPick(e.target.value)} className={`${input} max-w-xs`}>
              <option value="">—</option>
              {found.data?.jobs.map((j) => <option key={`${j.id}`} value={`${j.id}`}>{jobLabel(j, j.id)}</option>)}
            </select>
          </label>
          <Button onClick={add} disabled={!pick}>{t("wf.addNode")}</Button>
        </div>
        <ErrorBox error={found.error} />
        {f.nodes.length === 0 ? <p className="text-sm text-slate-500">{t("wf.noNodes")}</p> : (
          <Table testid="wf-nodes" head={[t("wf.key"), t("wf.job"), t("wf.dependsOn"), t("wf.param"), ""]}>
            {f.nodes.map((n) => (
              <tr key={n.uid} data-node-row={n.key}>
                <td className="px-2 py-2 sm:px-3">
                  <input name={`key-${n.uid}`} aria-label={t("wf.key")} required value={n.key} onChange={(e) => setNode(n.uid, { key: e.target.value })}
                    className="w-36 rounded border border-slate-300 px-2 py-1 font-mono" />
                </td>
                <td className={`min-w-24 px-2 py-2 sm:px-3 ${wrap}`}>{jobLabel(jobs.get(n.jobId), n.jobId)}</td>
                <td className="px-2 py-2 sm:px-3">
                  <div className="flex flex-wrap gap-x-3 gap-y-1">
                    {f.nodes.filter((o) => o.uid !== n.uid).map((o) => (
                      <label key={o.uid} className="flex items-center gap-1 font-mono text-xs">
                        <input type="checkbox" name={`dep-${n.key}-${o.key}`} checked={n.parents.includes(o.uid)}
                          onChange={(e) => setNode(n.uid, { parents: e.target.checked ? [...n.parents, o.uid] : n.parents.filter((p) => p !== o.uid) })} />
                        {o.key}
                      </label>
                    ))}
                  </div>
                </td>
                <td className="px-2 py-2 sm:px-3">
                  <input name={`param-${n.uid}`} aria-label={t("wf.param")} value={n.param} onChange={(e) => setNode(n.uid, { param: e.target.value })}
                    className="w-32 rounded border border-slate-300 px-2 py-1 font-mono" />
                </td>
                <td className="px-2 py-2 sm:px-3"><Button onClick={() => remove(n.uid)}>{t("wf.remove")}</Button></td>
              </tr>
            ))}
          </Table>
        )}
      </fieldset>
      {f.nodes.length > 0 && (
        <div className="md:col-span-3">
          <DagGraph label={t("wf.graph")} nodes={f.nodes.map((n) => ({
            key: gid.get(n.uid)!, dependsOn: n.parents.map((p) => gid.get(p)!), sub: jobLabel(jobs.get(n.jobId), n.jobId),
          }))} />
        </div>
      )}
      <div className="flex items-center gap-2 md:col-span-3">
        {!beside && <ErrorBox error={err} />}
        <Button type="submit" kind="primary">{editing ? t("form.save") : t("form.create")}</Button>
        <Button onClick={onDone}>{t("form.cancel")}</Button>
      </div>
    </form>
  );
}
