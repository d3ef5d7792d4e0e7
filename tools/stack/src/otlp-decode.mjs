// OTLP trace exports decoded by hand (Node built-ins only): the protobuf that the SDK's default
// exporter sends (`http/protobuf`) and OTLP/JSON (`http/json`), each into [{resource, scope, span}]
// in OTLP's own shapes, for the trace receiver (trace-receiver.mjs) to write.

/** Span kinds by their number in OTLP. */
export const KINDS = ['UNSPECIFIED', 'INTERNAL', 'SERVER', 'CLIENT', 'PRODUCER', 'CONSUMER'];

// ---------------------------------------------------------------------------------------------
// Protobuf wire format: just what opentelemetry/proto/collector/trace/v1 needs.

/** The fields of one message: [{no, wire, value}], value a bigint (varint), or a Buffer. */
function fields(buf) {
  const out = [];
  let at = 0;
  const varint = () => {
    let value = 0n;
    let shift = 0n;
    for (;;) {
      if (at >= buf.length) throw new Error('truncated varint');
      const byte = buf[at++];
      value |= BigInt(byte & 0x7f) << shift;
      if ((byte & 0x80) === 0) return value;
      shift += 7n;
      if (shift > 63n) throw new Error('varint too long');
    }
  };
  const take = (length) => {
    if (at + length > buf.length) throw new Error('truncated field');
    const slice = buf.subarray(at, at + length);
    at += length;
    return slice;
  };
  while (at < buf.length) {
    const key = varint();
    const no = Number(key >> 3n);
    const wire = Number(key & 7n);
    if (wire === 0) out.push({ no, wire, value: varint() });
    else if (wire === 1) out.push({ no, wire, value: take(8) });
    else if (wire === 2) out.push({ no, wire, value: take(Number(varint())) });
    else if (wire === 5) out.push({ no, wire, value: take(4) });
    else throw new Error(`unsupported wire type ${wire}`);
  }
  return out;
}

const text = (value) => value.toString('utf8');
const hex = (value) => (value.length === 0 ? null : value.toString('hex'));
const fixed64 = (value) => value.readBigUInt64LE(0).toString();

/** A bigint from an int64 varint, as a number when it is exact, else its decimal string. */
function int64(value) {
  const n = BigInt.asIntN(64, value);
  return n >= BigInt(Number.MIN_SAFE_INTEGER) && n <= BigInt(Number.MAX_SAFE_INTEGER)
    ? Number(n)
    : n.toString();
}

function anyValue(buf) {
  for (const f of fields(buf)) {
    switch (f.no) {
      case 1:
        return text(f.value);
      case 2:
        return f.value !== 0n;
      case 3:
        return int64(f.value);
      case 4:
        return f.value.readDoubleLE(0);
      case 5:
        return fields(f.value)
          .filter((v) => v.no === 1)
          .map((v) => anyValue(v.value));
      case 6:
        return keyValues(fields(f.value).filter((v) => v.no === 1));
      case 7:
        return f.value.toString('base64');
    }
  }
  return null;
}

/** KeyValue messages (their fields already split) as one object. */
function keyValues(list) {
  const out = {};
  for (const kv of list) {
    let key = '';
    let value = null;
    for (const f of fields(kv.value)) {
      if (f.no === 1) key = text(f.value);
      else if (f.no === 2) value = anyValue(f.value);
    }
    out[key] = value;
  }
  return out;
}

const attributesOf = (list, no) => keyValues(list.filter((f) => f.no === no));

function protoLink(buf) {
  const f = fields(buf);
  const link = { traceId: null, spanId: null, attributes: attributesOf(f, 4) };
  for (const x of f) {
    if (x.no === 1) link.traceId = hex(x.value);
    else if (x.no === 2) link.spanId = hex(x.value);
    else if (x.no === 3 && x.value.length > 0) link.traceState = text(x.value);
  }
  return link;
}

function protoEvent(buf) {
  const f = fields(buf);
  const event = { name: '', timeUnixNano: '0', attributes: attributesOf(f, 3) };
  for (const x of f) {
    if (x.no === 1) event.timeUnixNano = fixed64(x.value);
    else if (x.no === 2) event.name = text(x.value);
  }
  return event;
}

function protoSpan(buf) {
  const f = fields(buf);
  const span = {
    traceId: null,
    spanId: null,
    parentSpanId: null,
    name: '',
    kind: 0,
    startTimeUnixNano: '0',
    endTimeUnixNano: '0',
    attributes: attributesOf(f, 9),
    events: [],
    links: [],
    status: { code: 0 },
  };
  for (const x of f) {
    switch (x.no) {
      case 1:
        span.traceId = hex(x.value);
        break;
      case 2:
        span.spanId = hex(x.value);
        break;
      case 3:
        if (x.value.length > 0) span.traceState = text(x.value);
        break;
      case 4:
        span.parentSpanId = hex(x.value);
        break;
      case 5:
        span.name = text(x.value);
        break;
      case 6:
        span.kind = Number(x.value);
        break;
      case 7:
        span.startTimeUnixNano = fixed64(x.value);
        break;
      case 8:
        span.endTimeUnixNano = fixed64(x.value);
        break;
      case 11:
        span.events.push(protoEvent(x.value));
        break;
      case 13:
        span.links.push(protoLink(x.value));
        break;
      case 15:
        for (const s of fields(x.value)) {
          if (s.no === 2 && s.value.length > 0) span.status.message = text(s.value);
          else if (s.no === 3) span.status.code = Number(s.value);
        }
        break;
    }
  }
  return span;
}

/** ExportTraceServiceRequest → [{resource, scope, span}] in OTLP's own shapes. */
function decodeProtobuf(body) {
  const out = [];
  for (const rs of fields(body).filter((f) => f.no === 1)) {
    const rsFields = fields(rs.value);
    let resource = {};
    for (const x of rsFields.filter((x) => x.no === 1)) resource = attributesOf(fields(x.value), 1);
    for (const ss of rsFields.filter((x) => x.no === 2)) {
      const ssFields = fields(ss.value);
      const scope = { name: '', version: '' };
      for (const x of ssFields.filter((x) => x.no === 1)) {
        for (const s of fields(x.value)) {
          if (s.no === 1) scope.name = text(s.value);
          else if (s.no === 2) scope.version = text(s.value);
        }
      }
      for (const x of ssFields.filter((x) => x.no === 2)) {
        out.push({ resource, scope, span: protoSpan(x.value) });
      }
    }
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// OTLP/JSON: ids in hex (base64 is accepted too), 64-bit numbers as strings or numbers.

function jsonId(value) {
  if (typeof value !== 'string' || value === '') return null;
  if (/^[0-9a-f]+$/i.test(value) && (value.length === 32 || value.length === 16)) {
    return value.toLowerCase();
  }
  return hex(Buffer.from(value, 'base64'));
}

function jsonAnyValue(v) {
  if (v === null || typeof v !== 'object') return null;
  if ('stringValue' in v) return v.stringValue;
  if ('boolValue' in v) return v.boolValue;
  if ('intValue' in v) return int64(BigInt(v.intValue));
  if ('doubleValue' in v) return Number(v.doubleValue);
  if ('arrayValue' in v) return (v.arrayValue?.values ?? []).map(jsonAnyValue);
  if ('kvlistValue' in v) return jsonAttributes(v.kvlistValue?.values);
  if ('bytesValue' in v) return v.bytesValue;
  return null;
}

function jsonAttributes(list) {
  const out = {};
  for (const kv of list ?? []) out[kv.key] = jsonAnyValue(kv.value);
  return out;
}

const KIND_NAMES = { SPAN_KIND_UNSPECIFIED: 0 };
KINDS.forEach((k, i) => (KIND_NAMES[`SPAN_KIND_${k}`] = i));

function decodeJson(body) {
  const request = JSON.parse(body.toString('utf8'));
  const out = [];
  for (const rs of request.resourceSpans ?? []) {
    const resource = jsonAttributes(rs.resource?.attributes);
    for (const ss of rs.scopeSpans ?? []) {
      const scope = { name: ss.scope?.name ?? '', version: ss.scope?.version ?? '' };
      for (const s of ss.spans ?? []) {
        out.push({
          resource,
          scope,
          span: {
            traceId: jsonId(s.traceId),
            spanId: jsonId(s.spanId),
            parentSpanId: jsonId(s.parentSpanId),
            ...(s.traceState ? { traceState: s.traceState } : {}),
            name: s.name ?? '',
            kind: typeof s.kind === 'string' ? (KIND_NAMES[s.kind] ?? 0) : (s.kind ?? 0),
            startTimeUnixNano: String(s.startTimeUnixNano ?? '0'),
            endTimeUnixNano: String(s.endTimeUnixNano ?? '0'),
            attributes: jsonAttributes(s.attributes),
            events: (s.events ?? []).map((e) => ({
              name: e.name ?? '',
              timeUnixNano: String(e.timeUnixNano ?? '0'),
              attributes: jsonAttributes(e.attributes),
            })),
            links: (s.links ?? []).map((l) => ({
              traceId: jsonId(l.traceId),
              spanId: jsonId(l.spanId),
              ...(l.traceState ? { traceState: l.traceState } : {}),
              attributes: jsonAttributes(l.attributes),
            })),
            status: {
              code: s.status?.code ?? 0,
              ...(s.status?.message ? { message: s.status.message } : {}),
            },
          },
        });
      }
    }
  }
  return out;
}

/**
 * The spans of one export request, decoded by its Content-Type: OTLP/JSON when that names
 * JSON, else protobuf.
 * @param {Buffer} body
 * @param {string} [contentType]
 */
export function decodeTraces(body, contentType) {
  return /json/i.test(contentType ?? '') ? decodeJson(body) : decodeProtobuf(body);
}
