package server

import (
	"context"
	"errors"
	"regexp"
	"strings"
	"sync"

	"connectrpc.com/connect"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// jsonNames is an interceptor that, for requests sent as JSON, names the
// fields of an invalid_argument message as JSON does ("job.groupId", not
// "job.group_id"): the names the caller wrote. Quoted values in the
// message (what the caller sent) are left as they are. Other protocols
// keep the proto names.
type jsonNames struct{}

// WrapUnary implements connect.Interceptor.
func (jsonNames) WrapUnary(next connect.UnaryFunc) connect.UnaryFunc {
	return func(ctx context.Context, req connect.AnyRequest) (connect.AnyResponse, error) {
		res, err := next(ctx, req)
		if err == nil || connect.CodeOf(err) != connect.CodeInvalidArgument || !isJSON(req) {
			return res, err
		}
		m, ok := req.Any().(proto.Message)
		if !ok {
			return res, err
		}
		var ce *connect.Error
		if !errors.As(err, &ce) {
			return res, err
		}
		msg := toJSONNames(ce.Message(), m.ProtoReflect().Descriptor())
		if msg == ce.Message() {
			return res, err
		}
		out := connect.NewError(ce.Code(), errors.New(msg))
		for k, v := range ce.Meta() {
			out.Meta()[k] = v
		}
		return res, out
	}
}

// WrapStreamingClient implements connect.Interceptor.
func (jsonNames) WrapStreamingClient(next connect.StreamingClientFunc) connect.StreamingClientFunc {
	return next
}

// WrapStreamingHandler implements connect.Interceptor.
func (jsonNames) WrapStreamingHandler(next connect.StreamingHandlerFunc) connect.StreamingHandlerFunc {
	return next
}

// isJSON tells whether the request came as JSON.
func isJSON(req connect.AnyRequest) bool {
	if req.HTTPMethod() == "GET" {
		return false // encoding in the query; rare, kept as it was
	}
	return strings.Contains(req.Header().Get("Content-Type"), "json")
}

var (
	// quoted matches a double-quoted Go string in a message: a value the
	// caller sent, never renamed.
	quoted = regexp.MustCompile(`"(?:[^"\\]|\\.)*"`)
	// snakeWord matches an identifier with an underscore.
	snakeWord = regexp.MustCompile(`\b[a-z][a-z0-9]*(?:_[a-z0-9]+)+\b`)

	jsonNameCache sync.Map // protoreflect.FullName -> map[string]string
)

// toJSONNames renames, outside quoted values, every snake_case word of msg
// that is the proto name of a field of md (or of the messages it holds) to
// that field's JSON name.
func toJSONNames(msg string, md protoreflect.MessageDescriptor) string {
	names := jsonNamesOf(md)
	var b strings.Builder
	last := 0
	for _, q := range quoted.FindAllStringIndex(msg, -1) {
		b.WriteString(renameWords(msg[last:q[0]], names))
		b.WriteString(msg[q[0]:q[1]])
		last = q[1]
	}
	b.WriteString(renameWords(msg[last:], names))
	return b.String()
}

func renameWords(s string, names map[string]string) string {
	return snakeWord.ReplaceAllStringFunc(s, func(w string) string {
		if j, ok := names[w]; ok {
			return j
		}
		return w
	})
}

// jsonNamesOf maps the proto names of the fields of md and of the messages
// it holds, at any depth, that differ from their JSON names.
func jsonNamesOf(md protoreflect.MessageDescriptor) map[string]string {
	if v, ok := jsonNameCache.Load(md.FullName()); ok {
		return v.(map[string]string)
	}
	names := map[string]string{}
	seen := map[protoreflect.FullName]bool{}
	var walk func(protoreflect.MessageDescriptor)
	walk = func(md protoreflect.MessageDescriptor) {
		if seen[md.FullName()] {
			return
		}
		seen[md.FullName()] = true
		fields := md.Fields()
		for i := range fields.Len() {
			f := fields.Get(i)
			if string(f.Name()) != f.JSONName() {
				names[string(f.Name())] = f.JSONName()
			}
			if f.Message() != nil {
				walk(f.Message())
			}
		}
	}
	walk(md)
	jsonNameCache.Store(md.FullName(), names)
	return names
}
