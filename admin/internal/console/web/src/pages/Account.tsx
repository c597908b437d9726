import { useMutation } from "@connectrpc/connect-query";
import { useState } from "react";
import { UserService } from "../gen/carillon/v1/user_pb";
import { useT } from "../i18n";
import { Button, ErrorBox } from "../ui";
import { ApiTokens } from "./ApiTokens";

// Account changes the user's own password (which ends their other sessions
// and revokes their API tokens) and manages the user's own API tokens.
export function Account() {
  const [t] = useT();
  const [oldPassword, setOld] = useState("");
  const [newPassword, setNew] = useState("");
  const change = useMutation(UserService.method.changePassword, { onSuccess: () => { setOld(""); setNew(""); } });
  const input = "mt-1 rounded border border-slate-300 px-2 py-1";
  return (
    <section className="flex flex-col gap-6">
      <div className="max-w-sm">
        <h1 className="mb-3 text-lg font-semibold">{t("account.title")}</h1>
        <form aria-label="change password" className="flex flex-col gap-3 text-sm" onSubmit={(e) => { e.preventDefault(); change.mutate({ oldPassword, newPassword }); }}>
          <label className="flex flex-col">{t("account.old")}<input name="old_password" type="password" autoComplete="current-password" value={oldPassword} onChange={(e) => setOld(e.target.value)} className={input} /></label>
          <label className="flex flex-col">{t("account.new")}<input name="new_password" type="password" autoComplete="new-password" value={newPassword} onChange={(e) => setNew(e.target.value)} className={input} /></label>
          <ErrorBox error={change.error} />
          {change.isSuccess && <p role="status" className="text-green-700">{t("account.changed")}</p>}
          <Button type="submit" kind="primary">{t("form.save")}</Button>
        </form>
      </div>
      <ApiTokens />
    </section>
  );
}
