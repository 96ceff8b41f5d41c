/**
 * Reading one JSON configuration file (`.mcp.json`, `.rein/settings.json`) the same way
 * everywhere: a byte-order mark some editors write is dropped rather than failing the
 * parse, and a syntax error says where it is, so the person can fix the file.
 */
import { readFile } from 'node:fs/promises';
import { errnoOf } from '../process/errno.js';

/** What reading a JSON file found; each caller words its own message from it. */
export type JsonFileRead =
  /** The file (or a folder on its way) does not exist. */
  | { kind: 'missing' }
  /** The file exists but could not be read (a folder, no permission…). */
  | { kind: 'unreadable'; reason: string }
  /** Not JSON; `where` reads like `line 3, column 5: Unexpected token …`. */
  | { kind: 'invalid'; where: string }
  | { kind: 'ok'; data: unknown };

/**
 * Reads and parses `file`. Never throws.
 *
 * @example
 * const read = await readJsonFile('.mcp.json');
 * if (read.kind === 'invalid') console.warn(`.mcp.json is not valid JSON (${read.where})`);
 */
export async function readJsonFile(file: string): Promise<JsonFileRead> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (error) {
    const code = errnoOf(error);
    if (code === 'ENOENT' || code === 'ENOTDIR') return { kind: 'missing' };
    return { kind: 'unreadable', reason: error instanceof Error ? error.message : String(error) };
  }
  const json = text.replace(/^\uFEFF/, '');
  try {
    return { kind: 'ok', data: JSON.parse(json) };
  } catch (error) {
    return { kind: 'invalid', where: jsonErrorWhere(json, error) };
  }
}

/** "line 3, column 5: Unexpected token …" from a JSON.parse error, when it names a position. */
function jsonErrorWhere(text: string, error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  const match = /position (\d+)/.exec(message);
  if (!match) return message;
  const position = Number(match[1]);
  const before = text.slice(0, position);
  const line = before.split('\n').length;
  const column = position - before.lastIndexOf('\n');
  return `line ${line}, column ${column}: ${message.replace(/ in JSON at position \d+.*$/s, '')}`;
}
