package server

import (
	"encoding/json"
	"mime"
	"net/http"
	"strings"
)

// contentTypes are the request Content-Types the API serves (Connect
// unary JSON and binary, Connect streaming, gRPC, gRPC-Web).
var contentTypes = []string{"application/json", "application/proto", "application/connect+", "application/grpc"}

// requireContentType answers a POST to the API whose Content-Type is
// missing or not one the API speaks with 415 and a JSON body saying what
// to send; connect-go answers it with an empty body, which "curl -s"
// prints as nothing. Other requests go to next.
func requireContentType(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || !strings.HasPrefix(r.URL.Path, "/carillon.v1.") {
			next.ServeHTTP(w, r)
			return
		}
		ct := r.Header.Get("Content-Type")
		mt, _, _ := mime.ParseMediaType(ct)
		for _, ok := range contentTypes {
			if mt == ok || (strings.HasSuffix(ok, "+") || ok == "application/grpc") && strings.HasPrefix(mt, ok) {
				next.ServeHTTP(w, r)
				return
			}
		}
		what := "no Content-Type"
		if ct != "" {
			what = "Content-Type " + ct + ", which the API does not take"
		}
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Accept-Post", "application/json, application/proto")
		w.WriteHeader(http.StatusUnsupportedMediaType)
		_ = json.NewEncoder(w).Encode(map[string]string{
			"code": "invalid_argument",
			"message": "the request has " + what + ": send a JSON body with the header 'Content-Type: application/json' " +
				"(curl -H 'Content-Type: application/json' -d '{...}'), or use a Connect, gRPC or gRPC-Web client",
		})
	})
}
