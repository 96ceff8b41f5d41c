/**
 * Streaming a file line by line from an open handle, in chunks: reading lines 1–100 of a
 * 1 GB log reads one chunk, and a 5 MB minified line costs no more memory than its first
 * `maxLineChars` characters.
 */
import type { FileHandle } from 'node:fs/promises';
import { StringDecoder } from 'node:string_decoder';

const CHUNK_BYTES = 64 * 1024;

/** Options of {@link readLines}. */
export interface ReadLinesOptions {
  /** Characters of a line kept for `onLine`; the rest is only counted (`fullLength`). */
  maxLineChars: number;
  /**
   * Sees the first chunk (up to 64 KiB) before any line; answer false to stop without
   * reading further (a binary file).
   */
  accept?: (firstChunk: Uint8Array) => boolean;
  /**
   * Receives each line, without its `\n` (a `\r` stays), cut to `maxLineChars`, with its
   * 1-based number and full length in characters. Answer false to stop reading.
   */
  onLine: (line: string, lineNumber: number, fullLength: number) => boolean;
  signal?: AbortSignal;
}

/** How a {@link readLines} pass ended. */
export interface ReadLinesResult {
  /** Lines seen (the last one may be partial when `stopped`). */
  lines: number;
  /** `onLine` answered false (or the signal fired) before the end of the file. */
  stopped: boolean;
  /** `accept` answered false. */
  rejected: boolean;
}

/**
 * Reads `handle` from its start, calling `onLine` for each line. A final line without a
 * terminator counts; the empty string after a final `\n` does not.
 */
export async function readLines(handle: FileHandle, options: ReadLinesOptions): Promise<ReadLinesResult> {
  const buffer = Buffer.allocUnsafe(CHUNK_BYTES);
  const decoder = new StringDecoder('utf8');
  const max = options.maxLineChars;
  let position = 0;
  let lineNumber = 0;
  let head = '';
  let fullLength = 0;
  let first = true;

  const emit = (): boolean => {
    lineNumber++;
    const keep = options.onLine(head, lineNumber, fullLength);
    head = '';
    fullLength = 0;
    return keep;
  };
  const append = (piece: string): void => {
    if (head.length < max) head += piece.length <= max - head.length ? piece : piece.slice(0, max - head.length);
    fullLength += piece.length;
  };

  for (;;) {
    if (options.signal?.aborted) return { lines: lineNumber, stopped: true, rejected: false };
    const { bytesRead } = await handle.read(buffer, 0, CHUNK_BYTES, position);
    if (bytesRead === 0) break;
    position += bytesRead;
    const bytes = buffer.subarray(0, bytesRead);
    if (first) {
      first = false;
      if (options.accept && !options.accept(bytes)) return { lines: 0, stopped: true, rejected: true };
    }
    const text = decoder.write(bytes);
    let start = 0;
    for (let end = text.indexOf('\n'); end !== -1; end = text.indexOf('\n', start)) {
      append(text.slice(start, end));
      start = end + 1;
      if (!emit()) return { lines: lineNumber, stopped: true, rejected: false };
    }
    append(text.slice(start));
  }
  append(decoder.end());
  if (fullLength > 0) emit();
  return { lines: lineNumber, stopped: false, rejected: false };
}
