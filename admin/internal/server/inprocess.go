package server

import (
	"bytes"
	"io"
	"net/http"
)

// inProcess is an http.RoundTripper that serves each request with a
// handler in the calling goroutine, without a network: a client over it
// calls the server's own handlers, interceptors and all. The xxl-job
// endpoints use it to make their RegistryService calls.
type inProcess struct{ h http.Handler }

// RoundTrip serves req with t.h and returns what it wrote.
func (t inProcess) RoundTrip(req *http.Request) (*http.Response, error) {
	in := req.Clone(req.Context())
	in.RequestURI = req.URL.RequestURI()
	if in.Body == nil {
		in.Body = http.NoBody
	}
	w := &recorded{header: http.Header{}}
	t.h.ServeHTTP(w, in)
	if w.code == 0 {
		w.code = http.StatusOK
	}
	return &http.Response{
		Status: http.StatusText(w.code), StatusCode: w.code, Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header: w.header, Body: io.NopCloser(&w.body), ContentLength: int64(w.body.Len()), Request: req,
	}, nil
}

// recorded is an http.ResponseWriter that keeps the response in memory.
type recorded struct {
	header http.Header
	code   int
	body   bytes.Buffer
}

func (w *recorded) Header() http.Header { return w.header }

func (w *recorded) WriteHeader(code int) {
	if w.code == 0 {
		w.code = code
	}
}

func (w *recorded) Write(b []byte) (int, error) {
	w.WriteHeader(http.StatusOK)
	return w.body.Write(b)
}
