package server

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"connectrpc.com/connect"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// strictJSON is the management API's JSON codec. Unlike connect-go's, it
// refuses unknown fields and unknown enum names with invalid_argument
// naming the field (a misspelled "ROUTE_STRATEGY_ROUND_ROBBIN" silently
// became the default before), and it takes update masks in proto names
// ("route_strategy") as well as in JSON's lowerCamelCase. RegistryService
// keeps connect-go's lenient codec: executors built on a newer contract may
// send fields this admin does not know.
type strictJSON struct{ name string }

// strictJSONCodecs are the codecs for both names connect-go registers JSON under.
func strictJSONCodecs() []connect.HandlerOption {
	return []connect.HandlerOption{
		connect.WithCodec(strictJSON{"json"}),
		connect.WithCodec(strictJSON{"json; charset=utf-8"}),
	}
}

// Name implements connect.Codec.
func (c strictJSON) Name() string { return c.name }

// IsBinary tells connect-go the codec is JSON (for GET requests and errors).
func (c strictJSON) IsBinary() bool { return false }

// Marshal implements connect.Codec: compact JSON and a newline.
func (c strictJSON) Marshal(message any) ([]byte, error) {
	m, ok := message.(proto.Message)
	if !ok {
		return nil, fmt.Errorf("%T is not a proto.Message", message)
	}
	b, err := protojson.Marshal(m)
	if err != nil {
		return nil, err
	}
	// protojson varies its spaces from build to build on purpose; the
	// API's JSON is compact and ends with a newline, so that curl's
	// output is the same every time and ends its line.
	out := bytes.NewBuffer(make([]byte, 0, len(b)+1))
	if err := json.Compact(out, b); err != nil {
		return nil, err
	}
	out.WriteByte('\n')
	return out.Bytes(), nil
}

// Unmarshal implements connect.Codec.
func (c strictJSON) Unmarshal(data []byte, message any) error {
	m, ok := message.(proto.Message)
	if !ok {
		return fmt.Errorf("%T is not a proto.Message", message)
	}
	if len(bytes.TrimSpace(data)) == 0 {
		return errors.New("the request body is empty: send a JSON object, {} at least")
	}
	data = protoNameMasks(data, m.ProtoReflect().Descriptor())
	if err := protojson.Unmarshal(data, m); err != nil {
		if named := nameBadField(data, m.ProtoReflect().Descriptor()); named != nil {
			return named
		}
		return fmt.Errorf("the request body is not a %s in JSON: %w", m.ProtoReflect().Descriptor().Name(), err)
	}
	return nil
}

// decodeJSON decodes data keeping numbers as written.
func decodeJSON(data []byte) (any, error) {
	d := json.NewDecoder(bytes.NewReader(data))
	d.UseNumber()
	var v any
	err := d.Decode(&v)
	return v, err
}

// fieldErr is an error naming a field of the request, which connect-go
// returns as invalid_argument ("unmarshal message: <field>: <rule>", the
// prefix dropped by plainErrors).
func fieldErr(field, format string, args ...any) error {
	return fmt.Errorf("%s: %s", field, fmt.Sprintf(format, args...))
}

// nameBadField finds the first unknown field or enum name of data, a JSON
// message md, and returns an invalid_argument error naming it by its path
// as the request wrote it ("job.routeStrategy", or "job.route_strategy"
// from a request in the proto's names); nil when it finds none.
func nameBadField(data []byte, md protoreflect.MessageDescriptor) error {
	v, err := decodeJSON(data)
	if err != nil {
		return nil
	}
	return walkMessage(md, v, "")
}

func walkMessage(md protoreflect.MessageDescriptor, v any, prefix string) error {
	obj, ok := v.(map[string]any)
	if !ok || isWellKnown(md) {
		return nil
	}
	for key, val := range obj {
		fd := md.Fields().ByJSONName(key)
		if fd == nil {
			fd = md.Fields().ByTextName(key)
		}
		if fd == nil {
			return fieldErr(prefix+key, "unknown field (see the API's field names: lowerCamelCase or the proto's names)")
		}
		path := prefix + key // named as the request wrote it
		switch {
		case fd.IsMap():
			continue
		case fd.IsList():
			items, _ := val.([]any)
			for i, item := range items {
				if err := walkValue(fd, item, fmt.Sprintf("%s[%d]", path, i)); err != nil {
					return err
				}
			}
		default:
			if err := walkValue(fd, val, path); err != nil {
				return err
			}
		}
	}
	return nil
}

func walkValue(fd protoreflect.FieldDescriptor, v any, path string) error {
	switch fd.Kind() {
	case protoreflect.EnumKind:
		name, ok := v.(string)
		if !ok {
			return nil // a number: the request's checks judge it
		}
		values := fd.Enum().Values()
		if values.ByName(protoreflect.Name(name)) != nil {
			return nil
		}
		names := make([]string, 0, values.Len())
		for i := range values.Len() {
			names = append(names, string(values.Get(i).Name()))
		}
		return fieldErr(path, "unknown value %q: must be one of %s", name, strings.Join(names, ", "))
	case protoreflect.MessageKind, protoreflect.GroupKind:
		return walkMessage(fd.Message(), v, path+".")
	}
	return nil
}

// isWellKnown reports whether md has a JSON form of its own (Timestamp, a
// string; FieldMask, a string; Struct, any object...), which the walk skips.
func isWellKnown(md protoreflect.MessageDescriptor) bool {
	return md.ParentFile().Package() == "google.protobuf"
}

// protoNameMasks rewrites update masks written with proto names
// ("route_strategy,param") to the lowerCamelCase JSON requires of a
// FieldMask, and returns data unchanged when it has none.
func protoNameMasks(data []byte, md protoreflect.MessageDescriptor) []byte {
	if !bytes.Contains(data, []byte("_")) {
		return data
	}
	v, err := decodeJSON(data)
	if err != nil {
		return data
	}
	obj, ok := v.(map[string]any)
	if !ok {
		return data
	}
	changed := false
	for key, val := range obj {
		fd := md.Fields().ByJSONName(key)
		if fd == nil {
			fd = md.Fields().ByTextName(key)
		}
		s, isString := val.(string)
		if fd == nil || !isString || fd.Message() == nil || fd.Message().FullName() != "google.protobuf.FieldMask" || !strings.Contains(s, "_") {
			continue
		}
		paths := strings.Split(s, ",")
		for i, p := range paths {
			paths[i] = lowerCamel(strings.TrimSpace(p))
		}
		obj[key], changed = strings.Join(paths, ","), true
	}
	if !changed {
		return data
	}
	out, err := json.Marshal(obj)
	if err != nil {
		return data
	}
	return out
}

// lowerCamel turns a proto field path ("job.route_strategy") into its JSON
// form ("job.routeStrategy").
func lowerCamel(path string) string {
	var b strings.Builder
	upper := false
	for _, r := range path {
		switch {
		case r == '_':
			upper = true
		case upper && r >= 'a' && r <= 'z':
			b.WriteRune(r - 'a' + 'A')
			upper = false
		default:
			b.WriteRune(r)
			upper = false
		}
	}
	return b.String()
}

// cappedGzip is a gzip decompressor that stops with an error once it has
// produced more than max bytes. connect-go limits what it reads of a
// decompressed message to its read limit, but then decompresses the rest
// to report its size: a 1 MB gzip bomb cost 1 GiB of work before it was
// refused, for anyone, before authentication.
type cappedGzip struct {
	gz   gzip.Reader
	n    int64
	max  int64
	open bool
}

// errDecompressedTooLarge ends reading a decompressed message past its cap.
var errDecompressedTooLarge = errors.New("the decompressed message is larger than the admin accepts")

func (c *cappedGzip) Read(p []byte) (int, error) {
	if c.n > c.max {
		return 0, errDecompressedTooLarge
	}
	n, err := c.gz.Read(p)
	c.n += int64(n)
	return n, err
}

// Reset implements connect.Decompressor.
func (c *cappedGzip) Reset(r io.Reader) error {
	c.n, c.open = 0, true
	return c.gz.Reset(r)
}

// Close implements connect.Decompressor.
func (c *cappedGzip) Close() error {
	if !c.open {
		return nil
	}
	c.open = false
	return c.gz.Close()
}

// cappedGzipOption serves gzip, decompressing at most maxBytes (and a
// little more) of a request.
func cappedGzipOption(maxBytes int64) connect.HandlerOption {
	return connect.WithCompression("gzip",
		func() connect.Decompressor { return &cappedGzip{max: maxBytes} },
		func() connect.Compressor { return gzip.NewWriter(io.Discard) })
}
