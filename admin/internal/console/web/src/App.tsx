import { Code, ConnectError } from "@connectrpc/connect";
import { useMutation, useQuery } from "@connectrpc/connect-query";
import { useQueryClient } from "@tanstack/react-query";
import { Suspense, lazy, useEffect, useState } from "react";
import { Role, UserService } from "./gen/carillon/v1/user_pb";
import { setLang, useEnum, useT } from "./i18n";
import { Account } from "./pages/Account";
import { Dashboard } from "./pages/Dashboard";
import { Calendars } from "./pages/Calendars";
import { Groups } from "./pages/Groups";
import { Jobs } from "./pages/Jobs";
import { Runs } from "./pages/Runs";
import { SignIn } from "./pages/SignIn";
import { Users } from "./pages/Users";

// The Workflows page (its graph and editor) is its own chunk, loaded when
// it is opened, so the first load stays small.
const Workflows = lazy(() => import("./pages/Workflows"));

// route is the page of the location's hash: #/jobs, #/runs?job=7, ...
function useRoute(): [string, URLSearchParams] {
  const [hash, setHash] = useState(window.location.hash);
  useEffect(() => {
    const on = () => setHash(window.location.hash);
    window.addEventListener("hashchange", on);
    return () => window.removeEventListener("hashchange", on);
  }, []);
  const [path, query] = hash.replace(/^#/, "").split("?");
  return [path || "/", new URLSearchParams(query)];
}

export function App() {
  const [t, lang] = useT();
  const text = useEnum();
  const [route, params] = useRoute();
  const me = useQuery(UserService.method.getCurrentUser, {});
  const client = useQueryClient();
  const logout = useMutation(UserService.method.logout, { onSuccess: () => client.resetQueries() });

  if (me.isPending) return <p className="p-6">{t("loading")}</p>;
  if (me.error) {
    if (ConnectError.from(me.error).code === Code.Unauthenticated) return <SignIn />;
    return <p role="alert" className="p-6 text-red-700">{ConnectError.from(me.error).rawMessage}</p>;
  }
  const user = me.data.user!;
  const canWrite = user.role !== Role.VIEWER;
  const isAdmin = user.role === Role.ADMIN;
  const nav: [string, string][] = [
    ["/", t("nav.dashboard")],
    ["/jobs", t("nav.jobs")],
    ["/runs", t("nav.runs")],
    ["/workflows", t("nav.workflows")],
    ["/groups", t("nav.groups")],
    ["/calendars", t("nav.calendars")],
    ...(isAdmin ? [["/users", t("nav.users")] as [string, string]] : []),
  ];
  let page;
  switch (route) {
    case "/jobs":
      page = <Jobs canWrite={canWrite} />;
      break;
    case "/runs":
      page = <Runs canWrite={canWrite} isAdmin={isAdmin} jobId={params.get("job") ?? ""} runId={params.get("run") ?? ""} />;
      break;
    case "/workflows":
      page = <Suspense fallback={<p>{t("loading")}</p>}><Workflows canWrite={canWrite} id={params.get("id") ?? ""} run={params.get("run") ?? ""} /></Suspense>;
      break;
    case "/groups":
      page = <Groups isAdmin={isAdmin} canWrite={canWrite} />;
      break;
    case "/calendars":
      page = <Calendars isAdmin={isAdmin} />;
      break;
    case "/users":
      page = isAdmin ? <Users /> : <Dashboard />;
      break;
    case "/account":
      page = <Account />;
      break;
    default:
      page = <Dashboard />;
  }
  return (
    <div className="min-h-screen">
      <header className="flex flex-wrap items-center gap-x-6 gap-y-2 border-b border-slate-200 bg-white px-4 py-3">
        <span className="text-lg font-semibold text-indigo-700">{t("app.title")}</span>
        <nav aria-label="main" className="flex flex-wrap gap-4 text-sm">
          {nav.map(([href, label]) => (
            <a key={href} href={`#${href}`} aria-current={route === href ? "page" : undefined}
              className={route === href ? "font-semibold text-indigo-700" : "text-slate-600 hover:text-slate-900"}>
              {label}
            </a>
          ))}
        </nav>
        <span className="ml-auto flex items-center gap-3 text-sm">
          <a href="#/account" data-testid="whoami" className="hover:underline">{user.username} ({text("Role", Role, user.role)})</a>
          <button data-testid="lang" lang={lang === "zh" ? "en" : "zh"} className="text-indigo-700 underline" onClick={() => setLang(lang === "zh" ? "en" : "zh")}>{t("lang")}</button>
          <button className="text-slate-600 underline" onClick={() => logout.mutate({})}>{t("nav.signout")}</button>
        </span>
      </header>
      <main className="mx-auto max-w-7xl p-4">{page}</main>
    </div>
  );
}
