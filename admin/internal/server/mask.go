package server

import (
	"slices"
	"strings"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/known/fieldmaskpb"
)

// applyMask copies into dst the fields of src that mask names (proto field
// names, dotted for nested fields, e.g. "schedule.cron"). An empty mask
// copies every top-level field but the output-only ones. A path that names
// no field, or an output-only field, is invalid_argument; prefix is the
// request field holding src ("job"), for the message.
func applyMask(dst, src proto.Message, mask *fieldmaskpb.FieldMask, prefix string, outputOnly []string) error {
	d, s := dst.ProtoReflect(), src.ProtoReflect()
	if len(mask.GetPaths()) == 0 {
		fields := d.Descriptor().Fields()
		for i := range fields.Len() {
			fd := fields.Get(i)
			if !slices.Contains(outputOnly, string(fd.Name())) {
				copyField(d, s, fd)
			}
		}
		return nil
	}
	for _, path := range mask.GetPaths() {
		if slices.Contains(outputOnly, path) {
			return invalid("update_mask", "%s.%s is output only", prefix, path)
		}
		names := strings.Split(path, ".")
		dm, sm := d, s
		for i, name := range names {
			fd := dm.Descriptor().Fields().ByName(protoreflect.Name(name))
			if fd == nil {
				return invalid("update_mask", "%s has no field %q (in path %q)", prefix, name, path)
			}
			if i == len(names)-1 {
				copyField(dm, sm, fd)
				break
			}
			if fd.Message() == nil || fd.IsList() || fd.IsMap() {
				return invalid("update_mask", "%s.%s is not a message, so %q names nothing", prefix, name, path)
			}
			dm, sm = dm.Mutable(fd).Message(), sm.Get(fd).Message()
		}
	}
	return nil
}

func copyField(dst, src protoreflect.Message, fd protoreflect.FieldDescriptor) {
	if src.Has(fd) {
		dst.Set(fd, src.Get(fd))
	} else {
		dst.Clear(fd)
	}
}
