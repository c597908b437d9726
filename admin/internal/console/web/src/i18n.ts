import { useSyncExternalStore } from "react";

// English and Simplified Chinese. The browser's language picks the first;
// the switch is kept in localStorage.
const en = {
  "app.title": "Carillon",
  "nav.dashboard": "Dashboard",
  "nav.jobs": "Jobs",
  "nav.runs": "Runs",
  "nav.groups": "Executor groups",
  "nav.signout": "Sign out",
  "signin.title": "Sign in to Carillon",
  "signin.username": "Username",
  "signin.password": "Password",
  "signin.submit": "Sign in",
  "dash.jobs": "Jobs",
  "dash.enabled": "enabled",
  "dash.executors": "Live executors",
  "dash.runs": "Runs",
  "dash.perDay": "Runs per day",
  "dash.succeeded": "Succeeded",
  "dash.failed": "Failed",
  "dash.running": "Running",
  "dash.days": "days",
  "jobs.group": "Group",
  "jobs.all": "All",
  "jobs.text": "Search",
  "jobs.id": "ID",
  "jobs.description": "Description",
  "jobs.handler": "Handler",
  "jobs.schedule": "Schedule",
  "jobs.next": "Next fire",
  "jobs.enabled": "Enabled",
  "jobs.actions": "Actions",
  "jobs.start": "Start",
  "jobs.stop": "Stop",
  "jobs.trigger": "Run once",
  "jobs.runs": "Runs",
  "jobs.triggered": "Triggered run",
  "runs.job": "Job",
  "runs.status": "Status",
  "runs.executor": "Executor",
  "runs.scheduled": "Scheduled",
  "runs.triggered": "Sent",
  "runs.finished": "Finished",
  "runs.message": "Message",
  "runs.log": "Log",
  "runs.kill": "Kill",
  "runs.refresh": "Refresh",
  "groups.app": "App name",
  "groups.title": "Title",
  "groups.mode": "Mode",
  "groups.executors": "Executors",
  "page.next": "Next page",
  "page.first": "First page",
  "none": "Nothing here yet.",
  "loading": "Loading…",
  "lang": "中文",
};
type Key = keyof typeof en;
const zh: Record<Key, string> = {
  "app.title": "Carillon",
  "nav.dashboard": "运行报表",
  "nav.jobs": "任务管理",
  "nav.runs": "调度日志",
  "nav.groups": "执行器管理",
  "nav.signout": "退出登录",
  "signin.title": "登录 Carillon",
  "signin.username": "用户名",
  "signin.password": "密码",
  "signin.submit": "登录",
  "dash.jobs": "任务数量",
  "dash.enabled": "已启动",
  "dash.executors": "在线执行器",
  "dash.runs": "调度次数",
  "dash.perDay": "每日调度",
  "dash.succeeded": "成功",
  "dash.failed": "失败",
  "dash.running": "进行中",
  "dash.days": "天",
  "jobs.group": "执行器",
  "jobs.all": "全部",
  "jobs.text": "搜索",
  "jobs.id": "任务ID",
  "jobs.description": "任务描述",
  "jobs.handler": "JobHandler",
  "jobs.schedule": "调度",
  "jobs.next": "下次触发",
  "jobs.enabled": "状态",
  "jobs.actions": "操作",
  "jobs.start": "启动",
  "jobs.stop": "停止",
  "jobs.trigger": "执行一次",
  "jobs.runs": "查询日志",
  "jobs.triggered": "已触发",
  "runs.job": "任务",
  "runs.status": "状态",
  "runs.executor": "执行器地址",
  "runs.scheduled": "调度时间",
  "runs.triggered": "发送时间",
  "runs.finished": "结束时间",
  "runs.message": "消息",
  "runs.log": "执行日志",
  "runs.kill": "终止任务",
  "runs.refresh": "刷新",
  "groups.app": "AppName",
  "groups.title": "名称",
  "groups.mode": "注册方式",
  "groups.executors": "OnLine 机器地址",
  "page.next": "下一页",
  "page.first": "第一页",
  "none": "暂无数据",
  "loading": "加载中…",
  "lang": "English",
};

export type Lang = "en" | "zh";
const stored = localStorage.getItem("carillon.lang");
let lang: Lang = stored === "en" || stored === "zh" ? stored : navigator.language.toLowerCase().startsWith("zh") ? "zh" : "en";
const listeners = new Set<() => void>();

export function setLang(l: Lang) {
  lang = l;
  localStorage.setItem("carillon.lang", l);
  document.documentElement.lang = l === "zh" ? "zh-CN" : "en";
  listeners.forEach((f) => f());
}

// useT returns the translator of the current language, re-rendering on a switch.
export function useT(): [(k: Key) => string, Lang] {
  const l = useSyncExternalStore(
    (f) => {
      listeners.add(f);
      return () => listeners.delete(f);
    },
    () => lang,
  );
  return [(k: Key) => (l === "zh" ? zh[k] : en[k]), l];
}
