import { createConnectTransport } from "@connectrpc/connect-web";

// The console talks to the admin that serves it, over Connect with JSON.
// The session is an HttpOnly cookie the browser sends; every request says
// it comes from the console (X-Carillon-Console), which the admin requires
// of cookie-authenticated calls: a cross-site page cannot send that header.
export const transport = createConnectTransport({
  baseUrl: window.location.origin,
  fetch: (input, init) => fetch(input, { ...init, credentials: "same-origin" }),
  interceptors: [
    (next) => async (req) => {
      req.header.set("X-Carillon-Console", "1");
      return next(req);
    },
  ],
});
