package main

import (
	"fmt"

	"buf.build/gen/go/bufbuild/protovalidate/protocolbuffers/go/buf/validate"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// ruleMax returns the largest value the buf.validate rule of m's int32
// field name allows (its lte): the limit the admin checks, which the
// help texts and flag checks say from the .proto instead of again. It
// panics if the field has no such rule: a programming error, which any
// test of the CLI shows.
func ruleMax(m proto.Message, name protoreflect.Name) int {
	fd := m.ProtoReflect().Descriptor().Fields().ByName(name)
	if fd == nil {
		panic(fmt.Sprintf("%s has no field %s", m.ProtoReflect().Descriptor().FullName(), name))
	}
	rules, _ := proto.GetExtension(fd.Options(), validate.E_Field).(*validate.FieldRules)
	if !rules.GetInt32().HasLte() {
		panic(fmt.Sprintf("%s has no buf.validate int32.lte rule", fd.FullName()))
	}
	return int(rules.GetInt32().GetLte())
}
