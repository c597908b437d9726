import { useMutation, useQuery } from "@connectrpc/connect-query";
import { useQueryClient } from "@tanstack/react-query";
import { useState } from "react";
import { GroupService } from "../gen/carillon/v1/group_pb";
import { Role, UserService } from "../gen/carillon/v1/user_pb";
import { useT } from "../i18n";
import { Button, ErrorBox, Table, Time } from "../ui";
import { ApiTokens } from "./ApiTokens";

// Users is the ADMIN's page: users with roles and group grants, API
// tokens (shown once, revocable) and the audit log.
export function Users() {
  const [t] = useT();
  const users = useQuery(UserService.method.listUsers, {});
  const groups = useQuery(GroupService.method.listGroups, {});
  const audit = useQuery(UserService.method.listAuditLog, { pageSize: 50 });
  const client = useQueryClient();
  const done = { onSuccess: () => client.invalidateQueries() };
  const create = useMutation(UserService.method.createUser, done);
  const update = useMutation(UserService.method.updateUser, done);
  const [name, setName] = useState("");
  const [password, setPassword] = useState("");
  const [role, setRole] = useState(Role.VIEWER);
  const [grants, setGrants] = useState<string[]>([]);
  const input = "rounded border border-slate-300 px-2 py-1";
  return (
    <section className="flex flex-col gap-6">
      <div>
        <h1 className="mb-3 text-lg font-semibold">{t("users.title")}</h1>
        <form aria-label="new user" className="mb-3 flex flex-wrap items-end gap-2 text-sm"
          onSubmit={(e) => { e.preventDefault(); create.mutate({ user: { username: name, role, groupIds: role === Role.MEMBER ? grants.map(BigInt) : [] }, password }); }}>
          <label className="flex flex-col">{t("signin.username")}<input name="new_username" value={name} onChange={(e) => setName(e.target.value)} className={input} /></label>
          <label className="flex flex-col">{t("signin.password")}<input name="new_password" type="password" autoComplete="new-password" value={password} onChange={(e) => setPassword(e.target.value)} className={input} /></label>
          <label className="flex flex-col">{t("users.role")}
            <select name="role" value={role} onChange={(e) => setRole(Number(e.target.value))} className={input}>
              <option value={Role.ADMIN}>ADMIN</option><option value={Role.MEMBER}>MEMBER</option><option value={Role.VIEWER}>VIEWER</option>
            </select>
          </label>
          {role === Role.MEMBER && (
            <label className="flex flex-col">{t("users.groups")}
              <select name="grants" multiple value={grants} onChange={(e) => setGrants([...e.target.selectedOptions].map((o) => o.value))} className={input}>
                {groups.data?.groups.map((g) => <option key={`${g.id}`} value={`${g.id}`}>{g.appName}</option>)}
              </select>
            </label>
          )}
          <Button type="submit" kind="primary">{t("form.create")}</Button>
        </form>
        <ErrorBox error={users.error ?? create.error ?? update.error} />
        <Table head={["ID", t("signin.username"), t("users.role"), t("users.groups"), t("users.lastLogin"), ""]}>
          {users.data?.users.map((u) => (
            <tr key={`${u.id}`}>
              <td className="px-3 py-2">{`${u.id}`}</td>
              <td className="px-3 py-2">{u.username}{u.disabled ? ` (${t("users.disabled")})` : ""}
                {u.ssoSubject && <span title={`${u.ssoIssuer} ${u.ssoSubject}`} className="ml-1 rounded bg-slate-100 px-1 text-xs text-slate-600">{t("users.sso")}</span>}
              </td>
              <td className="px-3 py-2">
                <select aria-label={`${t("users.role")} ${u.username}`} value={u.role} className={input}
                  onChange={(e) => update.mutate({ user: { id: u.id, role: Number(e.target.value), groupIds: Number(e.target.value) === Role.MEMBER ? u.groupIds : [] },
                    updateMask: { paths: ["role", "group_ids"] } })}>
                  <option value={Role.ADMIN}>ADMIN</option><option value={Role.MEMBER}>MEMBER</option><option value={Role.VIEWER}>VIEWER</option>
                </select>
              </td>
              <td className="px-3 py-2">
                {u.role === Role.MEMBER ? (
                  <select aria-label={`${t("users.groups")} ${u.username}`} multiple value={u.groupIds.map(String)} className={input}
                    onChange={(e) => update.mutate({ user: { id: u.id, groupIds: [...e.target.selectedOptions].map((o) => BigInt(o.value)) }, updateMask: { paths: ["group_ids"] } })}>
                    {groups.data?.groups.map((g) => <option key={`${g.id}`} value={`${g.id}`}>{g.appName}</option>)}
                  </select>
                ) : "—"}
              </td>
              <td className="px-3 py-2 text-xs"><Time ts={u.lastLoginAt} /></td>
              <td className="px-3 py-2">
                <Button onClick={() => update.mutate({ user: { id: u.id, disabled: !u.disabled }, updateMask: { paths: ["disabled"] } })}>
                  {u.disabled ? t("users.enable") : t("users.disable")}
                </Button>
              </td>
            </tr>
          ))}
        </Table>
      </div>
      <ApiTokens allUsers />
      <div>
        <h2 className="mb-3 text-lg font-semibold">{t("audit.title")}</h2>
        <ErrorBox error={audit.error} />
        <Table head={[t("audit.at"), t("users.user"), t("audit.action"), t("audit.target"), t("audit.peer")]}>
          {audit.data?.entries.map((e) => (
            <tr key={`${e.id}`}>
              <td className="px-3 py-2 text-xs"><Time ts={e.time} /></td>
              <td className="px-3 py-2">{e.username}</td>
              <td className="px-3 py-2 font-mono text-xs">{e.action}</td>
              <td className="px-3 py-2">{e.target}</td>
              <td className="px-3 py-2 font-mono text-xs">{e.peer}</td>
            </tr>
          ))}
        </Table>
      </div>
    </section>
  );
}
