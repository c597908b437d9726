package server_test

import (
	"encoding/json"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"

	"github.com/carillonhq/carillon/admin/internal/dbtest"
	"github.com/carillonhq/carillon/admin/internal/server"
	_ "github.com/carillonhq/carillon/proto/carillon/v1" // registers the descriptors the document is checked against
)

// TestOpenAPI: /openapi.json and /openapi.yaml are served without a
// credential, say the same, and describe every management RPC as a POST
// path with its request and response schemas, every reference resolving,
// 64-bit integers as strings (protobuf's JSON mapping), the bearer scheme
// on all but Login; the executors' services are not in it.
func TestOpenAPI(t *testing.T) {
	t.Parallel()
	url, _, _ := serve(t, dbtest.SQLite, server.Config{})
	code, body := get(t, url+"/openapi.json")
	if code != 200 {
		t.Fatalf("/openapi.json: %d %q", code, body)
	}
	var doc map[string]any
	if err := json.Unmarshal([]byte(body), &doc); err != nil {
		t.Fatal(err)
	}
	code, body = get(t, url+"/openapi.yaml")
	var fromYAML map[string]any
	if err := yaml.Unmarshal([]byte(body), &fromYAML); code != 200 || err != nil {
		t.Fatalf("/openapi.yaml: %d, %v", code, err)
	}
	if len(fromYAML["paths"].(map[string]any)) != len(doc["paths"].(map[string]any)) {
		t.Errorf("the YAML has %d paths, the JSON %d", len(fromYAML["paths"].(map[string]any)), len(doc["paths"].(map[string]any)))
	}

	paths := doc["paths"].(map[string]any)
	schemas := doc["components"].(map[string]any)["schemas"].(map[string]any)
	want := 0
	protoregistry.GlobalFiles.RangeFilesByPackage("carillon.v1", func(f protoreflect.FileDescriptor) bool {
		services := f.Services()
		for i := range services.Len() {
			s := services.Get(i)
			methods := s.Methods()
			for j := range methods.Len() {
				m := methods.Get(j)
				path := "/" + string(s.FullName()) + "/" + string(m.Name())
				op, ok := paths[path].(map[string]any)
				executors := s.FullName() == "carillon.v1.ExecutorService" || s.FullName() == "carillon.v1.RegistryService"
				if executors {
					if ok {
						t.Errorf("%s: an executors' RPC is in the document", path)
					}
					continue
				}
				want++
				if !ok {
					t.Errorf("%s: not in the document", path)
					continue
				}
				post := op["post"].(map[string]any)
				for _, ref := range []string{
					refOf(post["requestBody"]), refOf(post["responses"].(map[string]any)["200"]),
				} {
					if _, ok := schemas[strings.TrimPrefix(ref, "#/components/schemas/")]; !ok {
						t.Errorf("%s: schema %q is not in the document", path, ref)
					}
				}
				_, open := post["security"]
				if open != (m.FullName() == "carillon.v1.UserService.Login") {
					t.Errorf("%s: open %v, want only Login open", path, open)
				}
			}
		}
		return true
	})
	if want == 0 || len(paths) != want {
		t.Errorf("%d paths, want %d (the management RPCs)", len(paths), want)
	}
	id := schemas["carillon.v1.Job"].(map[string]any)["properties"].(map[string]any)["id"].(map[string]any)
	if id["type"] != "string" || id["format"] != "int64" {
		t.Errorf("Job.id: %v, want a string of format int64", id)
	}
	var walk func(v any)
	walk = func(v any) {
		switch v := v.(type) {
		case map[string]any:
			if ref, ok := v["$ref"].(string); ok {
				if _, ok := schemas[strings.TrimPrefix(ref, "#/components/schemas/")]; !ok {
					t.Errorf("reference %q does not resolve", ref)
				}
			}
			for _, x := range v {
				walk(x)
			}
		case []any:
			for _, x := range v {
				walk(x)
			}
		}
	}
	walk(doc)
}

// refOf returns the schema reference of a request body or response.
func refOf(v any) string {
	s, _ := v.(map[string]any)["content"].(map[string]any)["application/json"].(map[string]any)["schema"].(map[string]any)["$ref"].(string)
	return s
}
