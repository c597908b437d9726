// Command protoc-gen-openapi is a protoc plugin (buf.gen.yaml runs it as a
// local plugin) that writes openapi.json and openapi.yaml: the OpenAPI 3.1
// document of the Connect services of the files it is given (package
// internal/openapi). Options: exclude and open, each a service or method
// full name, repeatable.
package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"strings"

	"go.yaml.in/yaml/v3"
	"google.golang.org/protobuf/compiler/protogen"
	"google.golang.org/protobuf/types/pluginpb"

	"github.com/carillonhq/carillon/internal/openapi"
)

func main() {
	var flags flag.FlagSet
	var exclude, open list
	title := flags.String("title", "API", "the document's title")
	version := flags.String("version", "v1", "the document's version")
	description := flags.String("description", "", "the document's description")
	flags.Var(&exclude, "exclude", "a service left out (repeatable)")
	flags.Var(&open, "open", "a method that needs no credential (repeatable)")
	protogen.Options{ParamFunc: flags.Set}.Run(func(p *protogen.Plugin) error {
		p.SupportedFeatures = uint64(pluginpb.CodeGeneratorResponse_FEATURE_PROTO3_OPTIONAL)
		var files []*protogen.File
		for _, f := range p.Files {
			if f.Generate {
				files = append(files, f)
			}
		}
		doc := openapi.Document(files, p.Files, openapi.Options{Title: *title, Version: *version, Description: *description,
			Exclude: exclude, Open: open})
		j, err := json.MarshalIndent(doc, "", "  ")
		if err != nil {
			return err
		}
		p.NewGeneratedFile("openapi.json", "").P(string(j))
		var y bytes.Buffer
		enc := yaml.NewEncoder(&y)
		enc.SetIndent(2)
		if err := enc.Encode(doc); err != nil {
			return err
		}
		p.NewGeneratedFile("openapi.yaml", "").P(strings.TrimSuffix(y.String(), "\n"))
		return nil
	})
}

// list is a repeatable flag.
type list []string

func (l *list) String() string     { return strings.Join(*l, ",") }
func (l *list) Set(v string) error { *l = append(*l, v); return nil }
