import { useMutation } from "@connectrpc/connect-query";
import { useQueryClient } from "@tanstack/react-query";
import { useEffect, useState } from "react";
import { UserService } from "../gen/carillon/v1/user_pb";
import { setLang, useT } from "../i18n";
import { Button, ErrorBox } from "../ui";

// AuthMethods is the admin's answer at /auth/methods: whether it offers
// single sign-on and passwords.
type AuthMethods = { sso: boolean; password: boolean };

// useAuthMethods asks the admin how one signs in; until it answers, and if
// it cannot, the password form alone is offered.
function useAuthMethods(): AuthMethods {
  const [methods, setMethods] = useState<AuthMethods>({ sso: false, password: true });
  useEffect(() => {
    let live = true;
    fetch("/auth/methods")
      .then((r) => (r.ok ? r.json() : null))
      .then((m: AuthMethods | null) => { if (live && m) setMethods(m); })
      .catch(() => {});
    return () => { live = false; };
  }, []);
  return methods;
}

// SignIn logs in with cookie: true: the admin sets an HttpOnly session
// cookie and returns no token, so no script of the page ever holds it.
// With single sign-on configured, "Sign in with SSO" goes to the
// admin's /auth/oidc/login, which comes back to / with the same cookie.
export function SignIn() {
  const [t, lang] = useT();
  const [username, setUsername] = useState("");
  const [password, setPassword] = useState("");
  const client = useQueryClient();
  const login = useMutation(UserService.method.login, { onSuccess: () => client.invalidateQueries() });
  const methods = useAuthMethods();
  return (
    <main className="mx-auto mt-24 max-w-sm rounded border border-slate-200 bg-white p-6 shadow-sm">
      <h1 className="mb-4 text-xl font-semibold">{t("signin.title")}</h1>
      {methods.sso && (
        <a href="/auth/oidc/login" id="sso"
          className="mb-3 block rounded bg-indigo-600 px-2.5 py-1.5 text-center text-sm font-medium text-white hover:bg-indigo-700 focus:outline-none focus:ring-2 focus:ring-indigo-400">
          {t("signin.sso")}
        </a>
      )}
      {methods.sso && methods.password && <p className="mb-3 text-center text-xs text-slate-500">{t("signin.or")}</p>}
      {methods.password && <form className="flex flex-col gap-3"
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
      </form>}
      <button className="mt-4 text-sm text-indigo-700 underline" onClick={() => setLang(lang === "zh" ? "en" : "zh")}>{t("lang")}</button>
    </main>
  );
}
