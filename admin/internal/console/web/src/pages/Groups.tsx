import { useMutation, useQuery } from "@connectrpc/connect-query";
import { useQueryClient } from "@tanstack/react-query";
import { useState } from "react";
import { AddressMode, ExecutorProtocol, GroupService, type Group } from "../gen/carillon/v1/group_pb";
import { useEnum, useT } from "../i18n";
import { Button, ErrorBox, Table, Time, wrap } from "../ui";
import { fieldOf } from "../form";

// protocolName is a group's executor protocol as the table shows it.
function protocolName(g: Group): string {
  if (g.executorProtocol !== ExecutorProtocol.XXL_JOB) return "Carillon";
  return g.allowScripts ? "xxl-job + scripts" : "xxl-job";
}

// Groups lists the executor groups with their live executors; an ADMIN
// creates, edits (AUTO or MANUAL addresses, executor protocol, scripts)
// and deletes them; an ADMIN or a MEMBER of the group pauses and resumes
// it.
export function Groups({ isAdmin, canWrite }: { isAdmin: boolean; canWrite: boolean }) {
  const [t] = useT();
  const text = useEnum();
  const q = useQuery(GroupService.method.listGroups, {}, { refetchInterval: 10_000 });
  const [edit, setEdit] = useState<Group | "new" | null>(null);
  const [confirm, setConfirm] = useState<bigint | null>(null);
  const client = useQueryClient();
  const del = useMutation(GroupService.method.deleteGroup, { onSuccess: () => client.invalidateQueries() });
  const pause = useMutation(GroupService.method.pauseGroup, { onSuccess: () => client.invalidateQueries() });
  const resume = useMutation(GroupService.method.resumeGroup, { onSuccess: () => client.invalidateQueries() });
  return (
    <section>
      <div className="mb-3 flex items-center gap-3">
        <h1 className="text-lg font-semibold">{t("nav.groups")}</h1>
        {isAdmin && !edit && <Button kind="primary" onClick={() => setEdit("new")}>{t("groups.new")}</Button>}
      </div>
      {edit && <GroupForm group={edit === "new" ? undefined : edit} onDone={() => setEdit(null)} />}
      <ErrorBox error={q.error ?? del.error ?? pause.error ?? resume.error} />
      <Table head={["ID", t("groups.app"), t("groups.title"), t("groups.mode"), t("groups.protocol"), t("groups.executors"), t("groups.updated"), ""]}>
        {q.data?.groups.map((g) => (
          <tr key={`${g.id}`}>
            <td className="px-3 py-2">{`${g.id}`}</td>
            <td className={`px-3 py-2 font-mono ${wrap}`}>{g.appName}</td>
            <td className={`px-3 py-2 ${wrap}`}>{g.title}{g.paused && (
              <span data-testid={`paused-${g.appName}`} title={t("groups.pausedTitle")}
                className="ml-2 rounded bg-amber-100 px-1.5 py-0.5 text-xs font-medium text-amber-800">{t("groups.paused")}</span>)}</td>
            <td className="px-3 py-2">{text("AddressMode", AddressMode, g.addressMode)}{g.hasOwnToken ? " 🔑" : ""}</td>
            <td className="px-3 py-2" data-testid={`protocol-${g.appName}`}>{protocolName(g)}</td>
            <td className={`px-3 py-2 font-mono text-xs ${wrap}`} data-testid={`executors-${g.appName}`}>
              {g.addressMode === AddressMode.MANUAL ? g.addresses.join(", ") || "—" : g.liveExecutors.length === 0 ? "—" : (
                <ul>{g.liveExecutors.map((e) => <li key={e.address}>{e.address} <span className="text-slate-500">· {t("groups.lastBeat")} <Time ts={e.lastBeat} /></span></li>)}</ul>
              )}
            </td>
            <td className="px-3 py-2 text-xs text-slate-500"><Time ts={g.updatedAt} /></td>
            <td className="px-3 py-2"><div className="flex gap-1 whitespace-nowrap">
              {canWrite && (g.paused
                ? <Button onClick={() => resume.mutate({ id: g.id })}>{t("groups.resume")}</Button>
                : <Button onClick={() => pause.mutate({ id: g.id })}>{t("groups.pause")}</Button>)}
              {isAdmin && <Button onClick={() => setEdit(g)}>{t("jobs.edit")}</Button>}
              {isAdmin && (confirm === g.id
                ? <Button kind="danger" onClick={() => { setConfirm(null); del.mutate({ id: g.id }); }}>{t("jobs.confirmDelete")}</Button>
                : <Button onClick={() => setConfirm(g.id)}>{t("jobs.delete")}</Button>)}
            </div></td>
          </tr>
        ))}
      </Table>
    </section>
  );
}

function GroupForm({ group, onDone }: { group?: Group; onDone: () => void }) {
  const [t] = useT();
  const [appName, setAppName] = useState(group?.appName ?? "");
  const [title, setTitle] = useState(group?.title ?? "");
  const [mode, setMode] = useState(group?.addressMode || AddressMode.AUTO);
  const [addresses, setAddresses] = useState(group?.addressMode === AddressMode.MANUAL ? group.addresses.join("\n") : "");
  const [protocol, setProtocol] = useState(group?.executorProtocol || ExecutorProtocol.CARILLON);
  const [allowScripts, setAllowScripts] = useState(group?.allowScripts ?? false);
  const [maxConcurrency, setMaxConcurrency] = useState(`${group?.maxConcurrency ?? 0}`);
  const client = useQueryClient();
  const done = { onSuccess: () => { client.invalidateQueries(); onDone(); } };
  const create = useMutation(GroupService.method.createGroup, done);
  const update = useMutation(GroupService.method.updateGroup, done);
  const err = group ? update.error : create.error;
  const bad = fieldOf(err);
  const input = "mt-1 rounded border border-slate-300 px-2 py-1";
  const g = { id: group?.id ?? 0n, appName, title, addressMode: mode, addresses: mode === AddressMode.MANUAL ? addresses.split(/\s+/).filter(Boolean) : [],
    executorProtocol: protocol, allowScripts: protocol === ExecutorProtocol.XXL_JOB && allowScripts, maxConcurrency: Number(maxConcurrency) || 0 };
  const note = (name: string) => bad && bad[0].replace(/^group\./, "") === name && <span role="alert" className="text-xs text-red-700">{bad[1]}</span>;
  return (
    <form aria-label="group" className="mb-4 grid grid-cols-1 gap-3 rounded border border-slate-200 bg-white p-4 text-sm md:grid-cols-3"
      onSubmit={(e) => { e.preventDefault(); if (group) update.mutate({ group: g }); else create.mutate({ group: g }); }}>
      <label className="flex flex-col">{t("groups.app")}<input name="app_name" value={appName} onChange={(e) => setAppName(e.target.value)} className={`${input} font-mono`} />{note("app_name")}</label>
      <label className="flex flex-col">{t("groups.title")}<input name="title" value={title} onChange={(e) => setTitle(e.target.value)} className={input} />{note("title")}</label>
      <label className="flex flex-col">{t("groups.mode")}
        <select name="address_mode" value={mode} onChange={(e) => setMode(Number(e.target.value))} className={input}>
          <option value={AddressMode.AUTO}>AUTO</option><option value={AddressMode.MANUAL}>MANUAL</option>
        </select>
      </label>
      <label className="flex flex-col">{t("groups.protocol")}
        <select name="executor_protocol" value={protocol} onChange={(e) => setProtocol(Number(e.target.value))} className={input}>
          <option value={ExecutorProtocol.CARILLON}>Carillon</option><option value={ExecutorProtocol.XXL_JOB}>xxl-job</option>
        </select>{note("executor_protocol")}
      </label>
      <label className="flex flex-col">{t("form.maxConcurrency")}
        <input name="max_concurrency" inputMode="numeric" title={t("groups.maxConcurrencyHint")} value={maxConcurrency} onChange={(e) => setMaxConcurrency(e.target.value)} className={input} />{note("max_concurrency")}
      </label>
      {protocol === ExecutorProtocol.XXL_JOB && (
        <label className="flex items-center gap-2 md:col-span-2">
          <input type="checkbox" name="allow_scripts" checked={allowScripts} onChange={(e) => setAllowScripts(e.target.checked)} />
          {t("groups.allowScripts")}
        </label>
      )}
      {mode === AddressMode.MANUAL && (
        <label className="flex flex-col md:col-span-3">{t("groups.addresses")}
          <textarea name="addresses" rows={3} value={addresses} onChange={(e) => setAddresses(e.target.value)} className={`${input} font-mono`} placeholder="http://10.0.0.5:9999" />{note("addresses")}
        </label>
      )}
      <div className="flex gap-2 md:col-span-3">
        {err && !bad && <ErrorBox error={err} />}
        <Button type="submit" kind="primary">{group ? t("form.save") : t("form.create")}</Button>
        <Button onClick={onDone}>{t("form.cancel")}</Button>
      </div>
    </form>
  );
}
