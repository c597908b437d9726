package server

import (
	_ "embed"
	"net/http"
)

// The management API's OpenAPI 3.1 document, generated from the protos
// (buf.gen.yaml's protoc-gen-openapi, package internal/openapi) and
// committed; CI checks that generating it again changes nothing.
var (
	//go:embed openapi/openapi.json
	openAPIJSON []byte
	//go:embed openapi/openapi.yaml
	openAPIYAML []byte
)

// openAPI serves the document, which needs no credential: it says what the
// API is, not what it holds.
func openAPI(body []byte, contentType string) http.HandlerFunc {
	return func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", contentType)
		w.Header().Set("Cache-Control", "no-cache")
		_, _ = w.Write(body)
	}
}
