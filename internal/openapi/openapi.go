// Package openapi describes Connect services as an OpenAPI 3.1 document:
// each unary RPC a POST path (/package.Service/Method) whose request and
// response bodies are the messages in protobuf's JSON mapping, as Connect
// serves them with Content-Type application/json. protoc-gen-openapi (a
// local buf plugin) writes the management API's document with it.
package openapi

import (
	"fmt"
	"slices"
	"strings"

	"google.golang.org/protobuf/compiler/protogen"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// Options says what goes in a document.
type Options struct {
	Title, Version, Description string
	// Exclude are the full names of services left out (those for
	// executors, say).
	Exclude []string
	// Open are the full names of methods that need no credential; every
	// other one needs the bearer scheme.
	Open []string
}

// Document returns the OpenAPI document of the services of files, as maps
// and slices ready to marshal (JSON and YAML marshal maps by sorted keys:
// the output is the same for the same input). The messages and fields of
// all (files and those they import) lend their comments to the schemas.
func Document(files, all []*protogen.File, o Options) map[string]any {
	d := &doc{schemas: map[string]any{}, comments: map[protoreflect.FullName]string{}}
	for _, f := range all {
		d.note(f.Messages)
	}
	paths := map[string]any{}
	var tags []any
	for _, f := range files {
		for _, s := range f.Services {
			if slices.Contains(o.Exclude, string(s.Desc.FullName())) {
				continue
			}
			tags = append(tags, map[string]any{"name": string(s.Desc.Name()), "description": comment(s.Comments)})
			for _, m := range s.Methods {
				if m.Desc.IsStreamingClient() || m.Desc.IsStreamingServer() {
					continue
				}
				paths["/"+string(s.Desc.FullName())+"/"+string(m.Desc.Name())] = map[string]any{"post": d.operation(s, m, o)}
			}
		}
	}
	d.schemas["connect.error"] = map[string]any{
		"type":        "object",
		"description": "A Connect error: the HTTP status follows the code (invalid_argument 400, unauthenticated 401, permission_denied 403, not_found 404, failed_precondition 400, …).",
		"properties": map[string]any{
			"code":    map[string]any{"type": "string", "examples": []any{"invalid_argument"}},
			"message": map[string]any{"type": "string"},
			"details": map[string]any{"type": "array", "items": map[string]any{"type": "object"}},
		},
	}
	return map[string]any{
		"openapi": "3.1.0",
		"info":    map[string]any{"title": o.Title, "version": o.Version, "description": o.Description},
		"tags":    tags,
		"paths":   paths,
		"components": map[string]any{
			"schemas": d.schemas,
			"securitySchemes": map[string]any{
				"bearer": map[string]any{"type": "http", "scheme": "bearer",
					"description": "A session from UserService/Login or an API token (carillon token create)."},
			},
		},
		"security": []any{map[string]any{"bearer": []any{}}},
	}
}

// doc collects the schemas a document refers to.
type doc struct {
	schemas  map[string]any
	comments map[protoreflect.FullName]string // of messages and fields
}

// note keeps the comments of ms, their fields and nested messages.
func (d *doc) note(ms []*protogen.Message) {
	for _, m := range ms {
		d.comments[m.Desc.FullName()] = comment(m.Comments)
		for _, f := range m.Fields {
			d.comments[f.Desc.FullName()] = comment(f.Comments)
		}
		d.note(m.Messages)
	}
}

// described is schema s with description text, if any.
func described(s any, text string) any {
	if text == "" {
		return s
	}
	out := map[string]any{"description": text}
	for k, v := range s.(map[string]any) {
		out[k] = v
	}
	return out
}

func (d *doc) operation(s *protogen.Service, m *protogen.Method, o Options) map[string]any {
	op := map[string]any{
		"operationId": string(s.Desc.Name()) + "_" + string(m.Desc.Name()),
		"tags":        []any{string(s.Desc.Name())},
		"summary":     summary(m.Comments),
		"description": comment(m.Comments),
		"requestBody": map[string]any{"required": true, "content": jsonContent(d.ref(m.Input.Desc))},
		"responses": map[string]any{
			"200":     map[string]any{"description": "OK", "content": jsonContent(d.ref(m.Output.Desc))},
			"default": map[string]any{"description": "A Connect error", "content": jsonContent(map[string]any{"$ref": "#/components/schemas/connect.error"})},
		},
	}
	if slices.Contains(o.Open, string(m.Desc.FullName())) {
		op["security"] = []any{}
	}
	return op
}

func jsonContent(schema any) map[string]any {
	return map[string]any{"application/json": map[string]any{"schema": schema}}
}

// ref returns a reference to message m's schema, adding it (and those it
// refers to) to the document's.
func (d *doc) ref(m protoreflect.MessageDescriptor) map[string]any {
	if s, ok := wellKnown[m.FullName()]; ok {
		return s
	}
	name := string(m.FullName())
	if _, ok := d.schemas[name]; !ok {
		d.schemas[name] = nil // taken: a message that refers to itself ends here
		d.schemas[name] = d.message(m)
	}
	return map[string]any{"$ref": "#/components/schemas/" + name}
}

func (d *doc) message(m protoreflect.MessageDescriptor) map[string]any {
	props := map[string]any{}
	fields := m.Fields()
	for i := range fields.Len() {
		f := fields.Get(i)
		props[f.JSONName()] = described(d.field(f), d.comments[f.FullName()])
	}
	return described(map[string]any{"type": "object", "properties": props}, d.comments[m.FullName()]).(map[string]any)
}

func (d *doc) field(f protoreflect.FieldDescriptor) any {
	if f.IsMap() {
		return map[string]any{"type": "object", "additionalProperties": d.single(f.MapValue())}
	}
	if f.IsList() {
		return map[string]any{"type": "array", "items": d.single(f)}
	}
	return d.single(f)
}

// single is the schema of one value of field f.
func (d *doc) single(f protoreflect.FieldDescriptor) any {
	switch f.Kind() {
	case protoreflect.BoolKind:
		return map[string]any{"type": "boolean"}
	case protoreflect.Int32Kind, protoreflect.Sint32Kind, protoreflect.Sfixed32Kind:
		return map[string]any{"type": "integer", "format": "int32"}
	case protoreflect.Uint32Kind, protoreflect.Fixed32Kind:
		return map[string]any{"type": "integer", "format": "int32", "minimum": 0}
	case protoreflect.Int64Kind, protoreflect.Sint64Kind, protoreflect.Sfixed64Kind, protoreflect.Uint64Kind, protoreflect.Fixed64Kind:
		// protobuf's JSON mapping writes 64-bit integers as strings, and
		// reads either.
		return map[string]any{"type": "string", "format": "int64", "pattern": "^-?[0-9]+$"}
	case protoreflect.FloatKind, protoreflect.DoubleKind:
		return map[string]any{"type": "number"}
	case protoreflect.StringKind:
		return map[string]any{"type": "string"}
	case protoreflect.BytesKind:
		return map[string]any{"type": "string", "format": "byte"}
	case protoreflect.EnumKind:
		values := f.Enum().Values()
		var names []any
		for i := range values.Len() {
			names = append(names, string(values.Get(i).Name()))
		}
		return map[string]any{"type": "string", "enum": names, "title": string(f.Enum().FullName())}
	case protoreflect.MessageKind, protoreflect.GroupKind:
		return d.ref(f.Message())
	}
	panic(fmt.Sprintf("openapi: field %s of kind %s", f.FullName(), f.Kind()))
}

// wellKnown are the JSON forms of the well-known types the protos use.
var wellKnown = map[protoreflect.FullName]map[string]any{
	"google.protobuf.Timestamp": {"type": "string", "format": "date-time"},
	"google.protobuf.Duration":  {"type": "string", "pattern": `^-?[0-9]+(\.[0-9]+)?s$`, "examples": []any{"1.5s"}},
	"google.protobuf.Empty":     {"type": "object"},
}

// comment is a leading comment's text, its lines joined.
func comment(c protogen.CommentSet) string {
	var lines []string
	for l := range strings.SplitSeq(strings.TrimSpace(string(c.Leading)), "\n") {
		lines = append(lines, strings.TrimSpace(l))
	}
	return strings.Join(lines, "\n")
}

// summary is a comment's first sentence.
func summary(c protogen.CommentSet) string {
	text := strings.Join(strings.Fields(comment(c)), " ")
	if i := strings.Index(text, ". "); i >= 0 {
		return text[:i+1]
	}
	return text
}
