/**
 * Small text helpers shared by the file tools: telling text from binary, numbering lines
 * the way `cat -n` does, sizes people read, and keeping one line from flooding a result.
 */

/** How many leading bytes {@link binaryKind} looks at. */
export const BINARY_SAMPLE_BYTES = 8192;

/** Longest line shown whole by read_file and grep; longer ones are cut with a note. */
export const MAX_LINE_CHARS = 2000;

const MAGIC: Array<[string, number[]]> = [
  ['PNG image', [0x89, 0x50, 0x4e, 0x47]],
  ['JPEG image', [0xff, 0xd8, 0xff]],
  ['GIF image', [0x47, 0x49, 0x46, 0x38]],
  ['PDF document', [0x25, 0x50, 0x44, 0x46]],
  ['zip archive (or a format built on zip: jar, docx, xlsx)', [0x50, 0x4b, 0x03, 0x04]],
  ['gzip archive', [0x1f, 0x8b]],
  ['ELF executable', [0x7f, 0x45, 0x4c, 0x46]],
  ['WebAssembly module', [0x00, 0x61, 0x73, 0x6d]],
  ['SQLite database', [0x53, 0x51, 0x4c, 0x69, 0x74, 0x65]],
];

/**
 * `undefined` when `sample` (the first bytes of a file) looks like text, else what it
 * looks like ("PNG image", "binary data"). Text means: no NUL byte, and at most 1 in 100
 * characters undecodable as UTF-8 (a stray Latin-1 byte in a comment is still text).
 */
export function binaryKind(sample: Uint8Array): string | undefined {
  for (const [name, bytes] of MAGIC) {
    if (bytes.length <= sample.length && bytes.every((byte, i) => sample[i] === byte)) return name;
  }
  if (sample.includes(0)) return 'binary data (it contains NUL bytes)';
  // A multi-byte character cut at the end of the sample is not an error of the file.
  const whole = sample.length >= BINARY_SAMPLE_BYTES ? sample.subarray(0, sample.length - 3) : sample;
  const text = Buffer.from(whole.buffer, whole.byteOffset, whole.byteLength).toString('utf8');
  let invalid = 0;
  for (let i = text.indexOf('\uFFFD'); i !== -1; i = text.indexOf('\uFFFD', i + 1)) invalid++;
  if (invalid > 0 && invalid * 100 > text.length) return 'binary or non-UTF-8 data';
  return undefined;
}

/** `1234` → `1.2 KB`; bytes below 1 KiB stay exact. */
export function formatBytes(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  const units = ['KB', 'MB', 'GB', 'TB'];
  let value = bytes / 1024;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit++;
  }
  return `${value < 10 ? value.toFixed(1) : Math.round(value)} ${units[unit]}`;
}

/** `1234567` → `1,234,567`. */
export function formatCount(count: number): string {
  return count.toLocaleString('en-US');
}

/** One numbered line as `cat -n` prints it: the number right-aligned in 6 columns, a tab, the text. */
export function numberedLine(lineNumber: number, text: string): string {
  return `${String(lineNumber).padStart(6)}\t${text}`;
}

/**
 * The line without its `\r` (CRLF files), cut to `maxChars` with a note giving its full
 * length (`fullLength`, when the caller already cut it).
 */
export function displayLine(line: string, fullLength: number = line.length, maxChars: number = MAX_LINE_CHARS): string {
  const text = line.endsWith('\r') && fullLength === line.length ? line.slice(0, -1) : line;
  const length = text.length === line.length ? fullLength : text.length;
  if (length <= maxChars) return text;
  return `${text.slice(0, maxChars)}… [line cut: ${formatCount(length)} characters]`;
}

/** 1-based line number of character `index` in `text`, counting from `fromIndex` at `fromLine`. */
export function lineAt(text: string, index: number, fromIndex = 0, fromLine = 1): number {
  let line = fromLine;
  for (let i = text.indexOf('\n', fromIndex); i !== -1 && i < index; i = text.indexOf('\n', i + 1)) line++;
  return line;
}

/** Whether the file's line breaks are mostly `\r\n`. */
export function usesCrlf(text: string): boolean {
  let crlf = 0;
  let lf = 0;
  for (let i = text.indexOf('\n'); i !== -1; i = text.indexOf('\n', i + 1)) {
    if (i > 0 && text.charCodeAt(i - 1) === 13) crlf++;
    else lf++;
  }
  return crlf > lf;
}
