/**
 * Response bodies sent with a `Content-Encoding`. rein asks for none (`accept-encoding:
 * identity`: a compressed event stream can be held back by the compressor, delaying
 * tokens), but a proxy may compress anyway; such a body is decompressed as it arrives.
 * node:zlib is loaded on the first compressed response only.
 */
import { createRequire } from 'node:module';
import { Transform, type TransformCallback } from 'node:stream';

const require = createRequire(import.meta.url);
let zlibModule: typeof import('node:zlib') | undefined;
const zlib = (): typeof import('node:zlib') => (zlibModule ??= require('node:zlib') as typeof import('node:zlib'));

/**
 * A decompressor for `encoding` (a Content-Encoding value): `undefined` for none
 * (`identity`), `null` for an encoding rein cannot decode.
 */
export function inflaterFor(encoding: string | undefined): Transform | undefined | null {
  if (encoding === undefined) return undefined;
  switch (encoding.trim().toLowerCase()) {
    case '':
    case 'identity':
      return undefined;
    case 'gzip':
    case 'x-gzip':
      // Z_SYNC_FLUSH: what has arrived is handed on at once, not when a block fills.
      return zlib().createGunzip({ flush: zlib().constants.Z_SYNC_FLUSH });
    case 'deflate':
      return new AnyDeflate();
    case 'br':
      return zlib().createBrotliDecompress({ flush: zlib().constants.BROTLI_OPERATION_FLUSH });
    default:
      return null;
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
