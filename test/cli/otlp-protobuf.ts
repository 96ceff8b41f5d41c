/**
 * Just enough of a protobuf reader to decode an OTLP `ExportTraceServiceRequest` in a test
 * (opentelemetry-proto's trace.proto: the field numbers below), so the default
 * `http/protobuf` export is checked on the wire, not only through the SDK.
 */

type Field = { number: number; wire: number; value: bigint | Buffer };

function fields(buf: Buffer): Field[] {
  const out: Field[] = [];
  let pos = 0;
  const varint = (): bigint => {
    let result = 0n;
    let shift = 0n;
    for (;;) {
      const byte = buf[pos++]!;
      result |= BigInt(byte & 0x7f) << shift;
      if ((byte & 0x80) === 0) return result;
      shift += 7n;
    }
  };
  while (pos < buf.length) {
    const key = Number(varint());
    const wire = key & 7;
    const number = key >> 3;
    if (wire === 0) out.push({ number, wire, value: varint() });
    else if (wire === 1) {
      out.push({ number, wire, value: buf.readBigUInt64LE(pos) });
      pos += 8;
    } else if (wire === 2) {
      const length = Number(varint());
      out.push({ number, wire, value: buf.subarray(pos, pos + length) });
      pos += length;
    } else if (wire === 5) {
      out.push({ number, wire, value: BigInt(buf.readUInt32LE(pos)) });
      pos += 4;
    } else throw new Error(`unexpected wire type ${wire}`);
  }
  return out;
}

const sub = (f: Field[], n: number): Buffer[] => f.filter((x) => x.number === n).map((x) => x.value as Buffer);

function anyValue(buf: Buffer): unknown {
  const [f] = fields(buf);
  if (!f) return undefined;
  if (f.number === 1) return (f.value as Buffer).toString('utf8');
  if (f.number === 2) return f.value === 1n;
  if (f.number === 3) return Number(BigInt.asIntN(64, f.value as bigint));
  if (f.number === 4) return Buffer.from((f.value as bigint).toString(16).padStart(16, '0'), 'hex').readDoubleBE(0);
  if (f.number === 5) return sub(fields(f.value as Buffer), 1).map(anyValue);
  return undefined;
}

/** A decoded span. */
export interface DecodedSpan {
  traceId: string;
  spanId: string;
  parentSpanId: string;
  name: string;
  kind: number;
  attributes: Record<string, unknown>;
}

/** The spans of one OTLP/protobuf trace export request body. */
export function decodeTraceRequest(body: Buffer): DecodedSpan[] {
  const spans: DecodedSpan[] = [];
  for (const resourceSpans of sub(fields(body), 1)) {
    for (const scopeSpans of sub(fields(resourceSpans), 2)) {
      for (const span of sub(fields(scopeSpans), 2)) {
        const f = fields(span);
        const bytes = (n: number) => sub(f, n)[0]?.toString('hex') ?? '';
        const attributes: Record<string, unknown> = {};
        for (const kv of sub(f, 9)) {
          const k = fields(kv);
          attributes[sub(k, 1)[0]?.toString('utf8') ?? ''] = anyValue(sub(k, 2)[0] ?? Buffer.alloc(0));
        }
        spans.push({
          traceId: bytes(1),
          spanId: bytes(2),
          parentSpanId: bytes(4),
          name: sub(f, 5)[0]?.toString('utf8') ?? '',
          kind: Number(f.find((x) => x.number === 6)?.value ?? 0),
          attributes,
        });
      }
    }
  }
  return spans;
}
