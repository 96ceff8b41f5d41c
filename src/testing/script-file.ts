/**
 * A scripted model server started from a file, as a command line starts it: the flags,
 * the script read from a module or a JSON file and checked, and the server. Shared by
 * `rein scripted-server` and `node dist/testing/cli.js` (the benchmark's), so both
 * read the same flags the same way.
 */
import { readFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { ParseArgsConfig } from 'node:util';
import { ReinError } from '../errors.js';
import type { Script, ScriptTurn } from './script.js';
import { startScriptedServer, type ScriptedServer, type ScriptedServerOptions } from './server.js';
import { isRecord } from '../util/json.js';

/** The flags of a scripted server command line, as `node:util` parseArgs takes them. */
export const SCRIPTED_SERVER_FLAGS = {
  'script-module': { type: 'string' },
  script: { type: 'string' },
  port: { type: 'string' },
  host: { type: 'string' },
  model: { type: 'string' },
  'chunk-size': { type: 'string' },
  'token-delay-ms': { type: 'string' },
} as const satisfies NonNullable<ParseArgsConfig['options']>;

/** The values of {@link SCRIPTED_SERVER_FLAGS}, as parsed. */
export type ScriptedServerFlagValues = { [K in keyof typeof SCRIPTED_SERVER_FLAGS]?: string };

/** What the server's URL line on stdout holds: the base URL of OpenAI's wires and the bare origin (Anthropic's, Gemini's). */
export function urlLine(server: Pick<ScriptedServer, 'url' | 'origin'>): string {
  return `${JSON.stringify({ url: server.url, origin: server.origin })}\n`;
}

/** The fields a scripted turn takes (see {@link ScriptTurn}). */
const TURN_FIELDS: ReadonlyArray<keyof ScriptTurn> = ['text', 'thinking', 'toolCalls', 'finishReason', 'usage', 'fault', 'delayMs'];

function fail(message: string, cause?: unknown): never {
  throw new ReinError('config', 'fatal', message, cause === undefined ? {} : { cause });
}

/**
 * Checks a list of turns read from a file, so a typo (`tool_calls`, a call without a name)
 * is named with its turn before any request comes, not answered oddly later.
 */
export function checkTurns(turns: unknown[], source: string): ScriptTurn[] {
  for (const [i, turn] of turns.entries()) {
    const where = `${source}: turn ${i + 1}`;
    if (!isRecord(turn))
      fail(`${where} is not an object (a turn is e.g. {"text": "Hello."} or {"toolCalls": [{"name": "…", "arguments": {…}}]})`);
    for (const key of Object.keys(turn)) {
      if (!(TURN_FIELDS as readonly string[]).includes(key))
        fail(`${where} has an unknown field "${key}" (a turn takes ${TURN_FIELDS.join(', ')})`);
    }
    for (const key of ['text', 'thinking'] as const) {
      if (turn[key] !== undefined && typeof turn[key] !== 'string') fail(`${where}: "${key}" must be a string`);
    }
    const calls = turn.toolCalls;
    if (calls === undefined) continue;
    if (!Array.isArray(calls)) fail(`${where}: "toolCalls" must be a list of {"name", "arguments"}`);
    for (const [j, call] of calls.entries()) {
      const name = isRecord(call) ? call.name : undefined;
      if (typeof name !== 'string' || name === '') fail(`${where}, tool call ${j + 1}: needs a "name" (a string)`);
      const args = (call as Record<string, unknown>).arguments;
      if (!isRecord(args) && typeof args !== 'string')
        fail(`${where}, tool call ${j + 1} (${name}): "arguments" must be an object (or a string of JSON sent as it is)`);
    }
  }
  return turns as ScriptTurn[];
}

/** The script a module's default export is: a list of turns or a function of the request. */
export async function loadScriptModule(path: string): Promise<Script> {
  if (/\.json$/i.test(path)) fail(`${path}: a JSON list of turns is read with --script, not --script-module`);
  const file = resolve(path);
  let loaded: { default?: unknown };
  try {
    loaded = (await import(pathToFileURL(file).href)) as { default?: unknown };
  } catch (error) {
    const code = (error as { code?: unknown })?.code;
    if (code === 'ERR_MODULE_NOT_FOUND' && String((error as Error).message).includes(file)) fail(`${path}: no such script module`, error);
    fail(`${path}: the script module cannot be loaded: ${(error as Error)?.message ?? String(error)}`, error);
  }
  const script = loaded.default;
  if (typeof script === 'function') return script as Script;
  if (Array.isArray(script)) return checkTurns(script, path);
  fail(`${path}: the default export must be a script: a list of turns or a function of the request (export default [{ text: 'Hello.' }])`);
}

/** The script a JSON file holds: a list of turns. */
export async function loadScriptJson(path: string): Promise<Script> {
  let text: string;
  try {
    text = await readFile(resolve(path), 'utf8');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException)?.code;
    fail(`${path}: ${code === 'ENOENT' ? 'no such script file' : `the script file cannot be read: ${(error as Error).message}`}`, error);
  }
  let turns: unknown;
  try {
    turns = JSON.parse(text);
  } catch (error) {
    fail(`${path}: not valid JSON: ${(error as Error).message}`, error);
  }
  if (!Array.isArray(turns)) fail(`${path}: the script must be a JSON list of turns, e.g. [{"text": "Hello."}]`);
  return checkTurns(turns, path);
}

function whole(flag: string, value: string | undefined, min: number, max = Number.MAX_SAFE_INTEGER): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (value.trim() === '' || !Number.isInteger(n) || n < min || n > max) {
    fail(
      `--${flag} expects a whole number${max === Number.MAX_SAFE_INTEGER ? ` of at least ${min}` : ` from ${min} to ${max}`}, got "${value}"`,
    );
  }
  return n;
}

/**
 * The server's options from the flags, checked, with the script loaded (exactly one of
 * `--script-module` and `--script`). Every mistake is a `config` error that says what to fix.
 */
export async function scriptedServerOptions(values: ScriptedServerFlagValues): Promise<ScriptedServerOptions> {
  const modulePath = values['script-module'];
  const jsonPath = values.script;
  if (modulePath !== undefined && jsonPath !== undefined) fail('give --script-module or --script, not both');
  if (modulePath === undefined && jsonPath === undefined)
    fail(
      'no script given: --script-module <file.mjs> (its default export: a list of turns or a function) or --script <file.json> (a list of turns)',
    );
  const port = whole('port', values.port, 0, 65535);
  const chunkSize = whole('chunk-size', values['chunk-size'], 1);
  const tokenDelayMs = whole('token-delay-ms', values['token-delay-ms'], 0);
  const script = modulePath !== undefined ? await loadScriptModule(modulePath) : await loadScriptJson(jsonPath as string);
  return {
    script,
    ...(port === undefined ? {} : { port }),
    ...(values.host === undefined ? {} : { host: values.host }),
    ...(values.model === undefined ? {} : { model: values.model }),
    ...(chunkSize === undefined ? {} : { chunkSize }),
    ...(tokenDelayMs === undefined ? {} : { tokenDelayMs }),
    // Nobody can read `requests` from outside the process; keeping them would only grow memory.
    recordRequests: false,
  };
}

/** Starts the server of the flags; a port taken or a host that cannot be listened on is a `config` error. */
export async function startScriptedServerFromFlags(values: ScriptedServerFlagValues): Promise<ScriptedServer> {
  const options = await scriptedServerOptions(values);
  try {
    return await startScriptedServer(options);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException)?.code;
    if (typeof code === 'string' && /^(EADDRINUSE|EACCES|EADDRNOTAVAIL|ENOTFOUND|EAI_AGAIN)$/.test(code)) {
      fail(`cannot listen on ${options.host ?? '127.0.0.1'}:${options.port ?? 0}: ${(error as Error).message}`, error);
    }
    throw error;
  }
}
