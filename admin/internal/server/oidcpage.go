package server

import (
	"html/template"
	"net/http"
)

// signInFailedPage tells a person why single sign-on did not sign them
// in, with a way back to the console's sign-in page.
var signInFailedPage = template.Must(template.New("failed").Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Sign-in failed · Carillon</title></head>
<body style="font-family: sans-serif; max-width: 40em; margin: 4em auto">
<h1>Sign-in failed</h1>
<p id="reason">{{.}}</p>
<p><a href="/">Back to the sign-in page</a> · <a href="` + OIDCLoginPath + `">Try single sign-on again</a></p>
</body></html>
`))

// writeSignInFailed answers a refused sign-in with code and the page.
func writeSignInFailed(w http.ResponseWriter, code int, reason string) {
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'")
	h.Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(code)
	_ = signInFailedPage.Execute(w, reason)
}
