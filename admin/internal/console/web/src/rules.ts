import { getOption, hasOption, type DescMessage } from "@bufbuild/protobuf";
import { Code, ConnectError } from "@connectrpc/connect";
import { field as fieldRules } from "./gen/buf/validate/validate_pb";

// The request rules of the .proto files (buf.validate), read from the
// generated descriptors, so that a form says what the admin would before
// it sends: the same rule, in the admin's words (the server checks them
// all again, with protovalidate).

// maxBytes returns field's max_bytes rule in schema, or 0 without one.
export function maxBytes(schema: DescMessage, field: string): number {
  const f = schema.fields.find((x) => x.name === field || x.localName === field);
  if (!f || !hasOption(f, fieldRules)) return 0;
  const rules = getOption(f, fieldRules);
  return rules.type.case === "string" ? Number(rules.type.value.maxBytes) : 0;
}

// tooLong returns the first string field of msg (of schema) longer in
// UTF-8 bytes than its max_bytes rule as the admin's invalid_argument
// (`job.description: must be at most 255 bytes, got 300`), or undefined.
// HTML's maxlength counts UTF-16 units, not bytes, so forms use this.
export function tooLong(schema: DescMessage, msg: object, prefix: string): ConnectError | undefined {
  const values = msg as Record<string, unknown>;
  for (const f of schema.fields) {
    const v = values[f.localName];
    const max = typeof v === "string" ? maxBytes(schema, f.name) : 0;
    const n = max > 0 ? new TextEncoder().encode(v as string).length : 0;
    if (n > max) {
      return new ConnectError(`${prefix}.${f.name}: must be at most ${max} bytes, got ${n}`, Code.InvalidArgument);
    }
  }
  return undefined;
}
