/**
 * Response bodies sent with a `Content-Encoding` (or a transfer coding besides `chunked`).
 * rein asks for none (`accept-encoding: identity`: a compressed event stream can be held
 * back by the compressor, delaying tokens), but a proxy may compress anyway; such a body is
 * decompressed as it arrives. node:zlib is loaded on the first compressed response only.
 */
import { createRequire } from 'node:module';
import { Transform, type TransformCallback } from 'node:stream';

const require = createRequire(import.meta.url);
let zlibModule: typeof import('node:zlib') | undefined;
const zlib = (): typeof import('node:zlib') => (zlibModule ??= require('node:zlib') as typeof import('node:zlib'));

/**
 * The decoder of a response body, from its headers: `undefined` when the body is sent as it
 * is (the usual case: no Content-Encoding, at most `Transfer-Encoding: chunked`, which the
 * parser undoes). The codings are undone in the reverse of the order they were applied:
 * Transfer-Encoding's (`gzip, chunked`), then Content-Encoding's (`gzip, gzip` is undone
 * twice). Throws an {@link UndecodableBodyError} naming a coding rein cannot decode.
 */
export function bodyDecoder(contentEncoding: string | undefined, transferEncoding: string | undefined): Transform | undefined {
  if (contentEncoding === undefined && (transferEncoding === undefined || transferEncoding === 'chunked')) return undefined;
  const applied = codings(contentEncoding);
  const transfer = codings(transferEncoding);
  if (transfer[transfer.length - 1] === 'chunked') transfer.pop();
  applied.push(...transfer);
  if (applied.length === 0) return undefined;
  const decoders: Transform[] = [];
  for (let i = applied.length - 1; i >= 0; i--) {
    const decoder = decoderFor(applied[i] as string);
    if (decoder === undefined) {
      for (const made of decoders) made.destroy();
      throw i < applied.length - transfer.length
        ? new UndecodableBodyError('content-encoding', contentEncoding ?? '')
        : new UndecodableBodyError('transfer-encoding', transferEncoding ?? '');
    }
    decoders.push(decoder);
  }
  return decoders.length === 1 ? decoders[0] : new Chain(decoders);
}

/**
 * A body sent with a coding rein cannot decode (`zstd` on Node 20, `compress`). Thrown when
 * the head arrives, but reported only when a body byte needs decoding: an empty body (a bare
 * 503 from a proxy) has nothing to decode, and its status says what happened.
 */
export class UndecodableBodyError extends Error {
  readonly code = 'ERR_CONTENT_ENCODING';

  constructor(
    /** The header that named the coding. */
    readonly header: 'content-encoding' | 'transfer-encoding',
    /** Its value, as sent. */
    readonly value: string,
  ) {
    super(
      header === 'content-encoding'
        ? `the server sent the response body encoded as "${value}" (Content-Encoding), which rein cannot decode`
        : `the server sent the response body with a transfer coding rein cannot decode (Transfer-Encoding: ${value})`,
    );
    this.name = 'UndecodableBodyError';
  }
}

/** The codings a header lists, lower-case, without `identity` (which means none). */
function codings(value: string | undefined): string[] {
  if (value === undefined) return [];
  const list: string[] = [];
  for (const part of value.split(',')) {
    const coding = part.trim().toLowerCase();
    if (coding !== '' && coding !== 'identity') list.push(coding);
  }
  return list;
}

/** A decompressor for one coding, or `undefined` for one rein cannot decode. */
function decoderFor(coding: string): Transform | undefined {
  switch (coding) {
    case 'gzip':
    case 'x-gzip':
      // Z_SYNC_FLUSH: what has arrived is handed on at once, not when a block fills.
      return zlib().createGunzip({ flush: zlib().constants.Z_SYNC_FLUSH });
    case 'deflate':
      return new AnyDeflate();
    case 'br':
      return zlib().createBrotliDecompress({ flush: zlib().constants.BROTLI_OPERATION_FLUSH });
    case 'zstd': {
      // node:zlib decodes zstd from Node 22.15 / 23.8 on; Node 20 cannot.
      const { createZstdDecompress } = zlib() as { createZstdDecompress?: () => Transform };
      return createZstdDecompress?.();
    }
    default:
      return undefined;
  }
}

/**
 * Several decoders one after the other (`decoders[0]` undoes the coding applied last): what
 * is written goes through all of them, and what the last hands on comes out.
 */
class Chain extends Transform {
  private readonly first: Transform;
  private readonly last: Transform;

  constructor(private readonly decoders: Transform[]) {
    super();
    this.first = decoders[0] as Transform;
    this.last = decoders[decoders.length - 1] as Transform;
    for (let i = 0; i < decoders.length; i++) {
      const decoder = decoders[i] as Transform;
      decoder.on('error', (error: Error) => this.destroy(error));
      const next = decoders[i + 1];
      if (next !== undefined) decoder.pipe(next);
    }
    this.last.on('data', (data: Buffer) => this.push(data));
  }

  override _transform(chunk: Buffer, _encoding: BufferEncoding, done: TransformCallback): void {
    this.first.write(chunk, () => done());
  }

  override _flush(done: TransformCallback): void {
    this.last.once('end', () => done());
    this.first.end();
  }

  override _destroy(error: Error | null, done: (error: Error | null) => void): void {
    for (const decoder of this.decoders) decoder.destroy();
    done(error);
  }
}

/**
 * `deflate` is meant to be zlib-wrapped (RFC 9110), but some servers send the raw stream
 * (as browsers and undici accept): the first two bytes tell which it is.
 */
class AnyDeflate extends Transform {
  private inner: Transform | undefined;

  override _transform(chunk: Buffer, _encoding: BufferEncoding, done: TransformCallback): void {
    let inner = this.inner;
    if (inner === undefined) {
      const options = { flush: zlib().constants.Z_SYNC_FLUSH };
      inner = this.inner = zlibHeaderAt(chunk) ? zlib().createInflate(options) : zlib().createInflateRaw(options);
      inner.on('data', (data: Buffer) => this.push(data));
      inner.on('error', (error: Error) => this.destroy(error));
    }
    inner.write(chunk, () => done());
  }

  override _flush(done: TransformCallback): void {
    const inner = this.inner;
    if (inner === undefined) return done();
    inner.once('end', () => done());
    inner.end();
  }

  override _destroy(error: Error | null, done: (error: Error | null) => void): void {
    this.inner?.destroy();
    done(error);
  }
}

/** Whether `bytes` start with a zlib header: compression method 8, and a checksum of the two bytes that divides by 31. */
function zlibHeaderAt(bytes: Buffer): boolean {
  const first = bytes[0] ?? 0;
  if ((first & 0x0f) !== 8) return false;
  return bytes.length < 2 || ((first << 8) | (bytes[1] ?? 0)) % 31 === 0;
}
