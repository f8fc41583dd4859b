// A local OTLP/HTTP trace receiver for tests: accepts POST /v1/traces in JSON (http/json) and in
// protobuf (http/protobuf), decodes both into the same plain spans. The protobuf decoder reads only
// the fields of opentelemetry/proto/trace/v1/trace.proto that the tests look at.
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export type AttrValue = string | number | boolean;

export interface ReceivedSpan {
  traceId: string;
  spanId: string;
  parentSpanId: string;
  name: string;
  /** 1 internal, 2 server, 3 client (OTLP's SpanKind). */
  kind: number;
  attributes: Record<string, AttrValue>;
  /** 0 unset, 1 ok, 2 error. */
  statusCode: number;
  statusMessage: string;
  serviceName: string;
  /** Every attribute of its resource (service.name among them). */
  resource: Record<string, AttrValue>;
  /** How it arrived. */
  encoding: 'json' | 'protobuf';
}

export interface OtlpReceiver {
  url: string;
  spans: ReceivedSpan[];
  /** Content types of the exports received. */
  contentTypes: string[];
  /** Each export's path and request headers, in order. */
  exports: { path: string; headers: http.IncomingHttpHeaders }[];
  close(): Promise<void>;
}

/** `paths`: where exports are accepted (others answer 400), by default the OTLP/HTTP default `/v1/traces`. */
export async function startOtlpReceiver(paths: string[] = ['/v1/traces']): Promise<OtlpReceiver> {
  const spans: ReceivedSpan[] = [];
  const contentTypes: string[] = [];
  const exports: OtlpReceiver['exports'] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      const type = req.headers['content-type'] ?? '';
      contentTypes.push(type);
      exports.push({ path: req.url ?? '', headers: req.headers });
      try {
        if (!paths.includes(req.url ?? '')) throw new Error(`unexpected path ${req.url}`);
        spans.push(...(type.includes('json') ? fromJson(JSON.parse(body.toString('utf8'))) : fromProtobuf(body)));
        res.writeHead(200, { 'content-type': type.includes('json') ? 'application/json' : 'application/x-protobuf' });
        res.end(type.includes('json') ? '{}' : undefined);
      } catch (err) {
        res.writeHead(400, { 'content-type': 'text/plain' });
        res.end(String(err));
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    spans,
    contentTypes,
    exports,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

// ---- JSON (OTLP/HTTP JSON: ids as hex, int64 as strings) ----

interface JsonAnyValue {
  stringValue?: string;
  boolValue?: boolean;
  intValue?: string | number;
  doubleValue?: number;
}
interface JsonKeyValue {
  key: string;
  value: JsonAnyValue;
}

function jsonValue(v: JsonAnyValue): AttrValue {
  if (v.stringValue !== undefined) return v.stringValue;
  if (v.boolValue !== undefined) return v.boolValue;
  if (v.intValue !== undefined) return Number(v.intValue);
  if (v.doubleValue !== undefined) return v.doubleValue;
  return '';
}

const jsonAttrs = (kvs: JsonKeyValue[] | undefined) => Object.fromEntries((kvs ?? []).map((kv) => [kv.key, jsonValue(kv.value)]));

function fromJson(body: {
  resourceSpans?: {
    resource?: { attributes?: JsonKeyValue[] };
    scopeSpans?: {
      spans?: {
        traceId: string;
        spanId: string;
        parentSpanId?: string;
        name: string;
        kind?: number;
        attributes?: JsonKeyValue[];
        status?: { code?: number; message?: string };
      }[];
    }[];
  }[];
}): ReceivedSpan[] {
  const out: ReceivedSpan[] = [];
  for (const rs of body.resourceSpans ?? []) {
    const resource = jsonAttrs(rs.resource?.attributes);
    const serviceName = String(resource['service.name'] ?? '');
    for (const ss of rs.scopeSpans ?? [])
      for (const s of ss.spans ?? [])
        out.push({
          traceId: s.traceId,
          spanId: s.spanId,
          parentSpanId: s.parentSpanId ?? '',
          name: s.name,
          kind: s.kind ?? 0,
          attributes: jsonAttrs(s.attributes),
          statusCode: s.status?.code ?? 0,
          statusMessage: s.status?.message ?? '',
          serviceName,
          resource,
          encoding: 'json',
        });
  }
  return out;
}

// ---- protobuf ----

/** The fields of one message: field number -> values as read (varint as number, length-delimited as bytes, fixed64 as bigint). */
type Fields = Map<number, (number | bigint | Buffer)[]>;

function readMessage(buf: Buffer): Fields {
  const fields: Fields = new Map();
  let pos = 0;
  const varint = (): number => {
    let result = 0;
    let shift = 0;
    for (;;) {
      const b = buf[pos++];
      result += (b & 0x7f) * 2 ** shift;
      if (b < 0x80) return result;
      shift += 7;
    }
  };
  while (pos < buf.length) {
    const tag = varint();
    const field = Math.floor(tag / 8);
    const wire = tag & 7;
    let value: number | bigint | Buffer;
    if (wire === 0) value = varint();
    else if (wire === 1) {
      value = buf.readBigUInt64LE(pos);
      pos += 8;
    } else if (wire === 2) {
      const len = varint();
      value = buf.subarray(pos, pos + len);
      pos += len;
    } else if (wire === 5) {
      value = buf.readUInt32LE(pos);
      pos += 4;
    } else throw new Error(`unsupported wire type ${wire}`);
    const list = fields.get(field);
    if (list) list.push(value);
    else fields.set(field, [value]);
  }
  return fields;
}

const bytesOf = (f: Fields, n: number) => (f.get(n) ?? []) as Buffer[];
const firstBytes = (f: Fields, n: number) => bytesOf(f, n)[0] ?? Buffer.alloc(0);
const str = (f: Fields, n: number) => firstBytes(f, n).toString('utf8');
const num = (f: Fields, n: number) => Number(f.get(n)?.[0] ?? 0);

function anyValue(buf: Buffer): AttrValue {
  const f = readMessage(buf);
  if (f.has(1)) return str(f, 1); // string_value
  if (f.has(2)) return num(f, 2) === 1; // bool_value
  if (f.has(3)) return num(f, 3); // int_value (varint)
  if (f.has(4)) {
    const b = Buffer.alloc(8);
    b.writeBigUInt64LE(f.get(4)![0] as bigint);
    return b.readDoubleLE(0); // double_value (fixed64)
  }
  return '';
}

function attributes(list: Buffer[]): Record<string, AttrValue> {
  const out: Record<string, AttrValue> = {};
  for (const kv of list) {
    const f = readMessage(kv);
    out[str(f, 1)] = anyValue(firstBytes(f, 2));
  }
  return out;
}

function fromProtobuf(body: Buffer): ReceivedSpan[] {
  const out: ReceivedSpan[] = [];
  for (const rsBuf of bytesOf(readMessage(body), 1)) {
    const rs = readMessage(rsBuf);
    const resource = attributes(bytesOf(readMessage(firstBytes(rs, 1)), 1));
    const serviceName = String(resource['service.name'] ?? '');
    for (const ssBuf of bytesOf(rs, 2)) {
      for (const spanBuf of bytesOf(readMessage(ssBuf), 2)) {
        const s = readMessage(spanBuf);
        const status = readMessage(firstBytes(s, 15));
        out.push({
          traceId: firstBytes(s, 1).toString('hex'),
          spanId: firstBytes(s, 2).toString('hex'),
          parentSpanId: firstBytes(s, 4).toString('hex'),
          name: str(s, 5),
          kind: num(s, 6),
          attributes: attributes(bytesOf(s, 9)),
          statusCode: num(status, 3),
          statusMessage: str(status, 2),
          serviceName,
          resource,
          encoding: 'protobuf',
        });
      }
    }
  }
  return out;
}
