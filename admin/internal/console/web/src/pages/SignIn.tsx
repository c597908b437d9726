import { useMutation } from "@connectrpc/connect-query";
import { useQueryClient } from "@tanstack/react-query";
import { useState } from "react";
import { UserService } from "../gen/carillon/v1/user_pb";
import { setLang, useT } from "../i18n";
import { Button, ErrorBox } from "../ui";

// SignIn logs in with cookie: true: the admin sets an HttpOnly session
// cookie and returns no token, so no script of the page ever holds it.
export function SignIn() {
  const [t, lang] = useT();
  const [username, setUsername] = useState("");
  const [password, setPassword] = useState("");
  const client = useQueryClient();
  const login = useMutation(UserService.method.login, { onSuccess: () => client.invalidateQueries() });
  return (
    <main className="mx-auto mt-24 max-w-sm rounded border border-slate-200 bg-white p-6 shadow-sm">
      <h1 className="mb-4 text-xl font-semibold">{t("signin.title")}</h1>
      <form className="flex flex-col gap-3"
        onSubmit={(e) => {
          e.preventDefault();
          login.mutate({ username, password, cookie: true });
        }}>
        <label className="flex flex-col text-sm">
          {t("signin.username")}
          <input name="username" autoComplete="username" required value={username} onChange={(e) => setUsername(e.target.value)}
            className="mt-1 rounded border border-slate-300 px-2 py-1" />
        </label>
        <label className="flex flex-col text-sm">
          {t("signin.password")}
          <input name="password" type="password" autoComplete="current-password" required value={password}
            onChange={(e) => setPassword(e.target.value)} className="mt-1 rounded border border-slate-300 px-2 py-1" />
        </label>
        <ErrorBox error={login.error} />
        <Button type="submit" kind="primary" disabled={login.isPending}>{t("signin.submit")}</Button>
      </form>
      <button className="mt-4 text-sm text-indigo-700 underline" onClick={() => setLang(lang === "zh" ? "en" : "zh")}>{t("lang")}</button>
    </main>
  );
}
