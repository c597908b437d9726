package server

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"buf.build/go/protovalidate"
	"connectrpc.com/connect"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// shape checks a request against the buf.validate rules of its message in
// proto/carillon/v1 (required fields, lengths, patterns, ranges, enum
// values, list sizes, ids): the rules are written once, in the .proto,
// where the generated clients, the console and the CLI read them too. A
// violation is invalid_argument naming the field and the rule as the
// hand-written checks do ("job.handler: must be at most 255 bytes, got
// 300"); what the rules cannot say (a cron that parses, a zone that exists,
// a group a MEMBER may use, a cycle of child jobs) the rows of rpcs and the
// handlers check.
type shape struct {
	v protovalidate.Validator
}

// newShape returns a shape; it panics if protovalidate cannot be set up,
// which no request could change.
func newShape() *shape {
	v, err := protovalidate.New(protovalidate.WithFailFast())
	if err != nil {
		panic(fmt.Sprintf("server: protovalidate: %v", err))
	}
	return &shape{v: v}
}

// check returns nil when req (a request message) keeps its rules, else
// invalid_argument naming the first field that does not, by its proto
// path ("job.alarm_emails[2]"); name, if not nil, renames that path.
func (s *shape) check(req any, name func(field string) string) error {
	m, ok := req.(proto.Message)
	if !ok {
		return nil
	}
	err := s.v.Validate(m)
	if err == nil {
		return nil
	}
	var ve *protovalidate.ValidationError
	if !errors.As(err, &ve) || len(ve.Violations) == 0 {
		// A rule that does not compile or evaluate: our mistake, not the
		// caller's.
		return connect.NewError(connect.CodeInternal, fmt.Errorf("check the request: %w", err))
	}
	v := ve.Violations[0]
	field := protovalidate.FieldPathString(v.Proto.GetField())
	if name != nil {
		field = name(field)
	}
	return invalid(field, "%s", violationRule(v))
}

// violationRule says the rule v broke, and what the request had instead:
// "required", "must be at most 255 bytes, got 300", "does not match regex
// pattern `^…$`, got \"has space\"".
func violationRule(v *protovalidate.Violation) string {
	id := v.Proto.GetRuleId()
	if id == "required" {
		return "required"
	}
	rule := strings.TrimPrefix(v.Proto.GetMessage(), "value ")
	if rule == "" {
		rule = id
	}
	if !v.FieldValue.IsValid() {
		return rule
	}
	switch x := v.FieldValue.Interface().(type) {
	case string:
		if strings.HasPrefix(id, "string.pattern") {
			return fmt.Sprintf("%s, got %q", rule, x)
		}
		return fmt.Sprintf("%s, got %d", rule, len(x)) // lengths: never the value, which may be a password
	case int32, int64, protoreflect.EnumNumber:
		return fmt.Sprintf("%s, got %d", rule, x)
	case protoreflect.List:
		return fmt.Sprintf("%s, got %d", rule, x.Len())
	}
	return rule
}

// WrapUnary checks the request of every call of the services it wraps
// (RegistryService's) before the handler, but of an RPC whose row has
// handShape: its validate alone checks it (rpcs.go).
func (s *shape) WrapUnary(next connect.UnaryFunc) connect.UnaryFunc {
	return func(ctx context.Context, req connect.AnyRequest) (connect.AnyResponse, error) {
		r := rpcs[req.Spec().Procedure]
		if !r.handShape {
			if err := s.check(req.Any(), r.nameFor(req.Any())); err != nil {
				return nil, err
			}
		}
		if r.validate != nil {
			if err := r.validate(req.Any()); err != nil {
				return nil, err
			}
		}
		return next(ctx, req)
	}
}

// WrapStreamingClient is not used: the admin is not a client here.
func (*shape) WrapStreamingClient(next connect.StreamingClientFunc) connect.StreamingClientFunc {
	return next
}

// WrapStreamingHandler passes streams through: RegistryService has none.
func (*shape) WrapStreamingHandler(next connect.StreamingHandlerFunc) connect.StreamingHandlerFunc {
	return next
}
