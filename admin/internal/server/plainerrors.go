package server

import (
	"bytes"
	"net/http"
	"strconv"
	"strings"
)

// unmarshalPrefix is what connect-go puts before a request body's decoding
// error ("unmarshal message: job.routeStrategy: unknown value ..."): Go's
// words, not the caller's, since the rest names the field already.
var unmarshalPrefix = []byte(`"message":"unmarshal message: `)

// plainErrors drops connect-go's "unmarshal message: " from the message
// of a Connect unary error reply (a JSON body, status 4xx), so that a
// refused request body reads as the field and the rule alone, like every
// other invalid_argument. gRPC and gRPC-Web replies are left as they are.
func plainErrors(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ct := r.Header.Get("Content-Type")
		if r.Method != http.MethodPost || !strings.HasPrefix(r.URL.Path, "/carillon.v1.") ||
			!(strings.HasPrefix(ct, "application/json") || strings.HasPrefix(ct, "application/proto")) {
			next.ServeHTTP(w, r)
			return
		}
		pw := &plainErrorWriter{ResponseWriter: w}
		next.ServeHTTP(pw, r)
		pw.flush()
	})
}

// plainErrorWriter holds back the body of an error reply, which is small,
// to rewrite it; any other reply passes through.
type plainErrorWriter struct {
	http.ResponseWriter
	status int // of a held error reply; 0 while passing through
	body   bytes.Buffer
	wrote  bool
}

func (w *plainErrorWriter) WriteHeader(status int) {
	if w.wrote {
		return
	}
	w.wrote = true
	if status >= 400 && strings.HasPrefix(w.Header().Get("Content-Type"), "application/json") {
		w.status = status
		return
	}
	w.ResponseWriter.WriteHeader(status)
}

func (w *plainErrorWriter) Write(p []byte) (int, error) {
	if !w.wrote {
		w.WriteHeader(http.StatusOK)
	}
	if w.status != 0 {
		return w.body.Write(p)
	}
	return w.ResponseWriter.Write(p)
}

// Flush passes a flush through, but not of a held error reply.
func (w *plainErrorWriter) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok && w.status == 0 {
		f.Flush()
	}
}

// Unwrap gives http.ResponseController the writer underneath.
func (w *plainErrorWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// flush writes a held error reply, rewritten.
func (w *plainErrorWriter) flush() {
	if w.status == 0 {
		return
	}
	b := bytes.Replace(w.body.Bytes(), unmarshalPrefix, []byte(`"message":"`), 1)
	w.Header().Set("Content-Length", strconv.Itoa(len(b)))
	w.ResponseWriter.WriteHeader(w.status)
	_, _ = w.ResponseWriter.Write(b)
}
