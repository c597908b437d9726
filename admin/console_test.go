package admin_test

import (
	"compress/gzip"
	"io"
	"net/http"
	"regexp"
	"strings"
	"testing"
)

// TestConsoleServed checks that the admin serves the embedded console at /
// (and at its pages' paths) with a strict Content-Security-Policy and
// framing refused, its assets gzipped within the first-load budget, and
// that the API, health and reflection paths are still theirs.
func TestConsoleServed(t *testing.T) {
	t.Parallel()
	a := startAdmin(t)
	get := func(path string, header ...string) (*http.Response, string) {
		t.Helper()
		req, _ := http.NewRequest(http.MethodGet, a.URL+path, nil)
		for i := 0; i+1 < len(header); i += 2 {
			req.Header.Set(header[i], header[i+1])
		}
		tr := &http.Transport{DisableCompression: true}
		res, err := (&http.Client{Transport: tr}).Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return res, string(b)
	}
	var assets []string
	for _, p := range []string{"/", "/index.html", "/jobs", "/runs/7"} {
		res, body := get(p) //nolint:bodyclose // get reads and closes the body
		if res.StatusCode != 200 || !strings.Contains(body, `<div id="root">`) {
			t.Fatalf("GET %s: %d %.200s", p, res.StatusCode, body)
		}
		csp := res.Header.Get("Content-Security-Policy")
		for _, want := range []string{"default-src 'self'", "script-src 'self'", "frame-ancestors 'none'", "object-src 'none'"} {
			if !strings.Contains(csp, want) {
				t.Errorf("GET %s: CSP %q lacks %q", p, csp, want)
			}
		}
		m := regexp.MustCompile(`<meta name="carillon-style-nonce" content="([^"]+)">`).FindStringSubmatch(body)
		if strings.Contains(csp, "unsafe-") || m == nil || !strings.Contains(csp, "style-src 'self' 'nonce-"+m[1]+"'") || res.Header.Get("X-Frame-Options") != "DENY" {
			t.Errorf("GET %s: CSP %q, X-Frame-Options %q", p, csp, res.Header.Get("X-Frame-Options"))
		}
		if strings.Contains(body, "<script>") || regexp.MustCompile(`<script(?:[^>]*)>[^<]`).MatchString(body) || strings.Contains(body, " style=") {
			t.Errorf("GET %s: inline script or style in the page", p)
		}
		assets = regexp.MustCompile(`/assets/[^"]+`).FindAllString(body, -1)
	}
	if len(assets) < 2 {
		t.Fatalf("index.html names %v, want the JS and CSS", assets)
	}
	total := 0
	for _, p := range assets {
		res, body := get(p, "Accept-Encoding", "gzip") //nolint:bodyclose // get reads and closes the body
		if res.StatusCode != 200 || res.Header.Get("Content-Encoding") != "gzip" || !strings.Contains(res.Header.Get("Cache-Control"), "immutable") {
			t.Errorf("GET %s: %d, encoding %q, cache %q", p, res.StatusCode, res.Header.Get("Content-Encoding"), res.Header.Get("Cache-Control"))
		}
		if _, err := gzip.NewReader(strings.NewReader(body)); err != nil {
			t.Errorf("GET %s: not gzip: %v", p, err)
		}
		total += len(body)
	}
	t.Logf("first load: %d bytes of JS and CSS, gzipped", total)
	if total > 300<<10 {
		t.Errorf("first load is %d bytes gzipped, over the 300 KB budget", total)
	}
	if res, _ := get("/assets/missing.js"); res.StatusCode != 404 { //nolint:bodyclose // get reads and closes the body
		t.Errorf("a missing asset: %d, want 404", res.StatusCode)
	}
	res, err := http.Post(a.URL+"/carillon.v1.NoService/Nothing", "application/json", strings.NewReader("{}"))
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != 404 {
		t.Errorf("POST to no RPC: %d, want 404", res.StatusCode)
	}
	if res, _ := get("/healthz"); res.StatusCode != 200 { //nolint:bodyclose // get reads and closes the body
		t.Errorf("/healthz: %d", res.StatusCode)
	}
	// Paths of neither the console nor the API are not found: a scraper
	// pointed at the API port, a mistyped API path.
	for _, p := range []string{"/metrics", "/v1/jobs", "/carillon.v1/JobService", "/favicon.ico", "/jobsx"} {
		res, body := get(p) //nolint:bodyclose // get reads and closes the body
		if res.StatusCode != 404 || strings.Contains(body, `<div id="root">`) || !strings.Contains(body, "the web console is at /") {
			t.Errorf("GET %s: %d %.200s, want 404 saying what is served", p, res.StatusCode, body)
		}
	}
	if _, body := get("/metrics"); !strings.Contains(body, "--metrics-listen") { //nolint:bodyclose // get reads and closes the body
		t.Errorf("GET /metrics: %q, want where the metrics are", body)
	}
}
