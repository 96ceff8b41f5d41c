/**
 * Response bodies sent with a `Content-Encoding`. rein asks for none (`accept-encoding:
 * identity`: a compressed event stream can be held back by the compressor, delaying
 * tokens), but a proxy may compress anyway; such a body is decompressed as it arrives.
 * node:zlib is loaded on the first compressed response only.
 */
import { createRequire } from 'node:module';
import type { Transform } from 'node:stream';

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
      return zlib().createInflate({ flush: zlib().constants.Z_SYNC_FLUSH });
    case 'br':
      return zlib().createBrotliDecompress({ flush: zlib().constants.BROTLI_OPERATION_FLUSH });
    default:
      return null;
  }
}
