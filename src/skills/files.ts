/**
 * The files of a skill folder, as the model may see them: listed by relative path, read
 * only inside the folder. Paths with `..`, absolute paths and symlinks leading out are
 * refused, so a skill (or a model) cannot use `read_skill_file` to read anything else.
 */
import { closeSync, openSync, readdirSync, readSync, realpathSync, statSync } from 'node:fs';
import { isAbsolute, join } from 'node:path';
import { isInside } from '../workspace/paths.js';

/** A relative path inside a skill folder, resolved, or why it is refused. */
export type SkillPath =
  | { ok: true; path: string; relative: string; kind: 'file' | 'directory'; size: number }
  | { ok: false; code: 'path_refused' | 'not_found'; reason: string };

/** Directories never listed: they are tooling, not skill material. */
const SKIPPED_DIRS = new Set(['node_modules', '.git']);

/**
 * Resolves `path` (relative to the skill folder `dir`, `/`-separated; `""` or `.` is the
 * folder itself) and checks it stays inside the folder after following symlinks.
 */
export function resolveSkillPath(dir: string, path: string): SkillPath {
  const trimmed = path.trim();
  if (isAbsolute(trimmed) || /^[a-zA-Z]:/.test(trimmed) || trimmed.startsWith('\\') || trimmed.startsWith('~')) {
    return {
      ok: false,
      code: 'path_refused',
      reason: `"${path}" is not relative: give a path inside the skill folder, such as "references/guide.md"`,
    };
  }
  const segments = trimmed.split(/[\\/]+/).filter((s) => s !== '' && s !== '.');
  if (segments.includes('..')) {
    return {
      ok: false,
      code: 'path_refused',
      reason: `"${path}" leaves the skill folder ("..") : only files inside the skill folder can be read`,
    };
  }
  let root: string;
  let real: string;
  try {
    root = realpathSync(dir);
    real = realpathSync(join(dir, ...segments));
  } catch {
    return { ok: false, code: 'not_found', reason: `"${path}" does not exist in the skill folder` };
  }
  if (!isInside(root, real)) {
    return { ok: false, code: 'path_refused', reason: `"${path}" is a link that leads outside the skill folder: it cannot be read` };
  }
  const info = statSync(real);
  const rel = segments.join('/');
  if (info.isDirectory()) return { ok: true, path: real, relative: rel, kind: 'directory', size: 0 };
  if (!info.isFile()) return { ok: false, code: 'path_refused', reason: `"${path}" is not a regular file` };
  return { ok: true, path: real, relative: rel, kind: 'file', size: info.size };
}

/**
 * The files under `sub` (relative to the skill folder `dir`), `/`-separated and sorted,
 * at most `limit`; `truncated` says how many more there were. Hidden entries and links
 * leading outside the folder are left out. `SKILL.md` at the top is left out too: its
 * body is what loading the skill shows.
 */
export function listSkillFiles(dir: string, sub = '', limit = 100): { files: string[]; truncated: number } {
  const files: string[] = [];
  let total = 0;
  let root: string;
  try {
    root = realpathSync(dir);
  } catch {
    return { files, truncated: 0 };
  }
  const walk = (relDir: string, depth: number): void => {
    let entries: string[];
    try {
      entries = readdirSync(join(root, relDir)).sort();
    } catch {
      return;
    }
    for (const name of entries) {
      if (name.startsWith('.') || SKIPPED_DIRS.has(name)) continue;
      const rel = relDir === '' ? name : `${relDir}/${name}`;
      if (rel === 'SKILL.md') continue;
      let real: string;
      try {
        real = realpathSync(join(root, rel));
      } catch {
        continue; // a dangling link
      }
      if (!isInside(root, real)) continue;
      const info = statSync(real);
      if (info.isDirectory()) {
        // Deep trees are cut rather than walked: a listing is a table of contents.
        if (depth < 6) walk(rel, depth + 1);
      } else if (info.isFile()) {
        total++;
        if (files.length < limit) files.push(rel);
      }
    }
  };
  const start = sub
    .split(/[\\/]+/)
    .filter((s) => s !== '' && s !== '.')
    .join('/');
  walk(start, 0);
  return { files, truncated: total - files.length };
}

/** The folder's files in a form for the model: one per line, with a note when cut. */
export function formatFileList(list: { files: string[]; truncated: number }): string {
  const lines = list.files.map((file) => `- ${file}`);
  if (list.truncated > 0) lines.push(`- … and ${list.truncated} more`);
  return lines.join('\n');
}

/** A window of a text file's lines: what {@link readSkillText} answers. */
export interface TextWindow {
  /** The lines, joined by `\n`. */
  text: string;
  /** 1-based first and last line shown, and the file's line count. */
  from: number;
  to: number;
  total: number;
  binary: boolean;
}

/**
 * Reads lines of a text file from `startLine` (1-based) until about `maxChars`
 * characters, never splitting a line unless a single line is longer. Files larger than
 * `maxBytes` are read only up to it. A file with a NUL byte is reported as binary.
 */
export function readSkillText(path: string, startLine: number, maxChars: number, maxBytes: number): TextWindow {
  const fd = openSync(path, 'r');
  let buffer: Buffer;
  try {
    const size = Math.min(statSync(path).size, maxBytes);
    buffer = Buffer.alloc(size);
    let read = 0;
    while (read < size) {
      const n = readSync(fd, buffer, read, size - read, read);
      if (n === 0) break;
      read += n;
    }
    buffer = buffer.subarray(0, read);
  } finally {
    closeSync(fd);
  }
  if (buffer.subarray(0, 8192).includes(0)) return { text: '', from: 0, to: 0, total: 0, binary: true };
  const lines = buffer.toString('utf8').split(/\r?\n/);
  if (lines.at(-1) === '') lines.pop();
  const total = lines.length;
  const from = Math.min(Math.max(1, startLine), Math.max(1, total));
  const out: string[] = [];
  let chars = 0;
  let to = from - 1;
  for (let i = from - 1; i < total; i++) {
    const line = lines[i] as string;
    if (out.length > 0 && chars + line.length + 1 > maxChars) break;
    out.push(line.length > maxChars ? `${line.slice(0, maxChars)} […line cut]` : line);
    chars += line.length + 1;
    to = i + 1;
  }
  return { text: out.join('\n'), from, to, total, binary: false };
}
