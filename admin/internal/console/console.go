// Package console serves Carillon's web console: the built single-page app
// of web/ (TypeScript, React, Vite), embedded in the admin binary, so the
// console needs no Node at run time and no network but the admin's. It is
// a client of the public Connect API only: the same rules, scopes and
// audit apply to it as to curl.
package console

import (
	"bytes"
	"compress/gzip"
	"crypto/rand"
	"embed"
	"encoding/base64"
	"io"
	"io/fs"
	"net/http"
	"path"
	"slices"
	"strings"
	"sync"
)

//go:embed all:dist
var dist embed.FS

// contentSecurityPolicy allows the page nothing but its own origin: no
// inline script, no style element but its own stylesheet and those the
// page's scripts make with this response's nonce (the code editor,
// CodeMirror, adds its styles as style elements), no other host, no
// framing.
func contentSecurityPolicy(nonce string) string {
	return "default-src 'self'; script-src 'self'; style-src 'self' 'nonce-" + nonce + "'; img-src 'self' data:; " +
		"connect-src 'self'; font-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'; object-src 'none'"
}

// NonceMeta is the meta element of index.html that carries the response's
// style nonce to the page's scripts.
const NonceMeta = "carillon-style-nonce"

// Handler serves the console: the hashed assets under /assets/ (cached for
// a year: their names change with their content) and index.html (not
// cached) at / and at the paths of its pages (see isPage), with a strict
// Content-Security-Policy and framing refused. Any other path is a 404,
// not the console's page: a scraper's /metrics or a mistyped API path
// must not look answered.
func Handler() http.Handler {
	root, err := fs.Sub(dist, "dist")
	if err != nil {
		panic(err) // the embed pattern guarantees dist
	}
	index, err := fs.ReadFile(root, "index.html")
	if err != nil {
		panic("console: dist/index.html missing: run make console")
	}
	assets := http.FileServerFS(root)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		nonce := newNonce()
		h.Set("Content-Security-Policy", contentSecurityPolicy(nonce))
		h.Set("X-Frame-Options", "DENY")
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Referrer-Policy", "same-origin")
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			http.NotFound(w, r) // a call to no RPC (an unknown service or method) stays a 404
			return
		}
		if p := path.Clean(r.URL.Path); strings.HasPrefix(p, "/assets/") {
			if _, err := fs.Stat(root, strings.TrimPrefix(p, "/")); err != nil {
				http.NotFound(w, r)
				return
			}
			h.Set("Cache-Control", "public, max-age=31536000, immutable")
			h.Add("Vary", "Accept-Encoding")
			if gz := gzipped(root, strings.TrimPrefix(p, "/")); gz != nil && strings.Contains(r.Header.Get("Accept-Encoding"), "gzip") {
				h.Set("Content-Encoding", "gzip")
				h.Set("Content-Type", mimeType(p))
				_, _ = w.Write(gz) //nolint:gosec // an embedded asset of the console, not request data
				return
			}
			assets.ServeHTTP(w, r)
			return
		}
		if !isPage(r.URL.Path) {
			notFound(w, r.URL.Path)
			return
		}
		h.Set("Cache-Control", "no-cache")
		h.Set("Content-Type", "text/html; charset=utf-8")
		_, _ = w.Write(bytes.Replace(index, []byte("</head>"),
			[]byte(`<meta name="`+NonceMeta+`" content="`+nonce+`"></head>`), 1))
	})
}

// pages are the console's pages (its routes are the location's hash:
// /#/jobs), whose paths also serve the console, for a link written
// without the hash.
var pages = []string{"jobs", "runs", "groups", "users", "account"}

// isPage tells whether p is a path that serves the console's page.
func isPage(p string) bool {
	p = strings.TrimSuffix(path.Clean(p), "/")
	if p == "" || p == "/index.html" {
		return true
	}
	first, _, _ := strings.Cut(strings.TrimPrefix(p, "/"), "/")
	return slices.Contains(pages, first)
}

// notFound answers a path that is neither the console's nor the API's
// with 404 and what the admin does serve.
func notFound(w http.ResponseWriter, p string) {
	h := w.Header()
	h.Set("Content-Type", "text/plain; charset=utf-8")
	h.Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusNotFound)
	hint := "the web console is at /, the API at /carillon.v1.<Service>/<Method> (POST), health at /healthz and /readyz"
	if path.Clean(p) == "/metrics" {
		hint = "the admin serves its metrics on a listener of their own, at the address of --metrics-listen (not set: not served); " + hint
	}
	_, _ = io.WriteString(w, "404 page not found: "+hint+"\n")
}

// compressed holds each asset gzipped, made on its first request.
var compressed sync.Map // name -> []byte

// gzipped returns the asset name of root gzipped.
func gzipped(root fs.FS, name string) []byte {
	if gz, ok := compressed.Load(name); ok {
		return gz.([]byte)
	}
	b, err := fs.ReadFile(root, name)
	if err != nil {
		return nil
	}
	var buf bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	_, _ = zw.Write(b) // into memory: cannot fail
	_ = zw.Close()
	gz, _ := compressed.LoadOrStore(name, buf.Bytes())
	return gz.([]byte)
}

// mimeType returns the Content-Type of an asset by its extension.
func mimeType(name string) string {
	switch path.Ext(name) {
	case ".js":
		return "text/javascript; charset=utf-8"
	case ".css":
		return "text/css; charset=utf-8"
	case ".svg":
		return "image/svg+xml"
	}
	return "application/octet-stream"
}

// newNonce returns a fresh CSP nonce: 128 random bits.
func newNonce() string {
	b := make([]byte, 16)
	rand.Read(b)
	return base64.StdEncoding.EncodeToString(b)
}
