import { useMutation, useQuery } from "@connectrpc/connect-query";
import { useQueryClient } from "@tanstack/react-query";
import { useState } from "react";
import { UserService } from "../gen/carillon/v1/user_pb";
import { useT } from "../i18n";
import { Button, ErrorBox, Table, Time } from "../ui";

// ApiTokens lists API tokens (the caller's own, or with allUsers, an
// ADMIN's view of everyone's), creates one for the caller (shown once)
// and revokes them: how programs and the CLI get a credential, also where
// passwords are disabled and people sign in by single sign-on.
export function ApiTokens({ allUsers = false }: { allUsers?: boolean }) {
  const [t] = useT();
  const tokens = useQuery(UserService.method.listApiTokens, { allUsers });
  const client = useQueryClient();
  const done = { onSuccess: () => client.invalidateQueries() };
  const revoke = useMutation(UserService.method.revokeApiToken, done);
  const newToken = useMutation(UserService.method.createApiToken, done);
  const [tokenName, setTokenName] = useState("");
  const input = "rounded border border-slate-300 px-2 py-1";
  return (
    <div>
      <h2 className="mb-3 text-lg font-semibold">{t("tokens.title")}</h2>
      <form aria-label="new token" className="mb-3 flex items-end gap-2 text-sm" onSubmit={(e) => { e.preventDefault(); newToken.mutate({ name: tokenName }); }}>
        <label className="flex flex-col">{t("tokens.name")}<input name="token_name" value={tokenName} onChange={(e) => setTokenName(e.target.value)} className={input} /></label>
        <Button type="submit" kind="primary">{t("form.create")}</Button>
      </form>
      {newToken.data && (
        <p role="status" className="mb-3 rounded border border-amber-300 bg-amber-50 p-2 text-sm">
          {t("tokens.once")} <code data-testid="new-token" className="break-all font-mono">{newToken.data.token}</code>
        </p>
      )}
      <ErrorBox error={tokens.error ?? newToken.error ?? revoke.error} />
      <Table head={["ID", t("tokens.name"), t("users.user"), t("tokens.expires"), t("tokens.lastUsed"), ""]}>
        {tokens.data?.apiTokens.map((k) => (
          <tr key={`${k.id}`}>
            <td className="px-3 py-2">{`${k.id}`}</td>
            <td className="px-3 py-2">{k.name}</td>
            <td className="px-3 py-2">{k.username}</td>
            <td className="px-3 py-2 text-xs"><Time ts={k.expiresAt} /></td>
            <td className="px-3 py-2 text-xs"><Time ts={k.lastUsedAt} /></td>
            <td className="px-3 py-2"><Button kind="danger" onClick={() => revoke.mutate({ id: k.id })}>{t("tokens.revoke")}</Button></td>
          </tr>
        ))}
      </Table>
    </div>
  );
}
