/**
 * The server under test: a project folder with agent files, rein's scripted model server,
 * a SQLite store, and `rein serve`'s server built from them in this process (the same
 * catalog the CLI builds) — or the real CLI in a child process. Plus an SSE reader over
 * real HTTP.
 */
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { createParser } from 'eventsource-parser';
import type { RunEvent } from '../../src/events.js';
import { openServedAgents } from '../../src/cli/served-agents.js';
import type { CliIO } from '../../src/cli/io.js';
import { startScriptedServer, type Script, type ScriptedServer } from '../../src/testing/index.js';
import { startServer, type RunningServer, type ServerOptions } from '../../src/server/server.js';
import { SqliteStore } from '../../src/store/sqlite.js';
import type { AgentCatalog } from '../../src/server/types.js';

export const TOKEN = 'test-token-0123456789-0123456789-abcdef';

/** A project with `.rein/agents/<name>.md` files and a `.git` marker (rules and skills stop here). */
export async function makeServedProject(agents: Record<string, string>): Promise<{ base: string; project: string; home: string }> {
  const base = await mkdtemp(join(tmpdir(), 'rein-serve-'));
  const project = join(base, 'project');
  const home = join(base, 'home');
  await mkdir(join(project, '.git'), { recursive: true });
  await mkdir(join(project, '.rein/agents'), { recursive: true });
  await mkdir(home, { recursive: true });
  for (const [name, text] of Object.entries(agents)) await writeFile(join(project, '.rein/agents', `${name}.md`), text);
  return { base, project, home };
}

/** An agent file. */
export function agentFile(name: string, fields: Record<string, string>, prompt = 'You are a test agent.'): string {
  const lines = Object.entries({ name, description: `The ${name} test agent.`, model: 'openai/scripted', ...fields }).map(
    ([k, v]) => `${k}: ${v}`,
  );
  return `---\n${lines.join('\n')}\n---\n${prompt}\n`;
}

/** A server in this process over a fresh store, with the CLI's catalog of the project's agents. */
export interface InProcess {
  url: string;
  model: ScriptedServer;
  store: SqliteStore;
  server: RunningServer;
  agents: AgentCatalog;
  stderr: () => string;
  project: string;
  close(): Promise<void>;
}

export async function startInProcess(options: {
  agents: Record<string, string>;
  script: Script;
  tokenDelayMs?: number;
  chunkSize?: number;
  server?: Partial<ServerOptions>;
}): Promise<InProcess> {
  const { base, project, home } = await makeServedProject(options.agents);
  const model = await startScriptedServer({
    script: options.script,
    ...(options.tokenDelayMs ? { tokenDelayMs: options.tokenDelayMs } : {}),
    ...(options.chunkSize ? { chunkSize: options.chunkSize } : {}),
  });
  const store = new SqliteStore({ path: join(base, 'runs.db') });
  const err = new PassThrough();
  let stderr = '';
  err.on('data', (d: Buffer) => (stderr += d.toString()));
  const io: CliIO = {
    stdout: new PassThrough(),
    stderr: err,
    stdin: new PassThrough(),
    env: { HOME: home, PATH: process.env.PATH },
    signal: new AbortController().signal,
  };
  const agents = openServedAgents({ root: project, io, baseUrl: model.url });
  const server = await startServer({ store, agents, token: TOKEN, ...options.server });
  return {
    url: server.url,
    model,
    store,
    server,
    agents,
    project,
    stderr: () => stderr,
    close: async () => {
      await server.stop();
      await agents.close();
      await store.close();
      await model.close();
      await rm(base, { recursive: true, force: true });
    },
  };
}

/** A JSON request to the server; the body parsed when there is one. */
export async function call(
  url: string,
  path: string,
  init: { method?: string; body?: unknown; token?: string | null; headers?: Record<string, string>; raw?: string } = {},
) {
  const headers: Record<string, string> = { ...init.headers };
  if (init.token !== null) headers.authorization ??= `Bearer ${init.token ?? TOKEN}`;
  if (init.body !== undefined || init.raw !== undefined) headers['content-type'] ??= 'application/json';
  const response = await fetch(`${url}${path}`, {
    method: init.method ?? (init.body === undefined && init.raw === undefined ? 'GET' : 'POST'),
    headers,
    ...(init.raw !== undefined ? { body: init.raw } : init.body !== undefined ? { body: JSON.stringify(init.body) } : {}),
  });
  const text = await response.text();
  let body: any;
  try {
    body = text ? JSON.parse(text) : undefined;
  } catch {
    body = text;
  }
  return { status: response.status, body, headers: response.headers };
}

/** One SSE message as received. */
export interface SseMessage {
  id?: string;
  event?: string;
  data: RunEvent;
}

/**
 * Reads a run's event stream until it ends, or until `stopAfter` returns true for a
 * message (then the client cuts the connection). Returns the messages and how it ended.
 */
export async function readStream(
  url: string,
  runId: string,
  options: {
    lastEventId?: number;
    after?: number;
    stopAfter?: (m: SseMessage, all: SseMessage[]) => boolean;
    token?: string;
    signal?: AbortSignal;
  } = {},
): Promise<{ status: number; messages: SseMessage[]; ended: 'end' | 'cut'; comments: string[] }> {
  const controller = new AbortController();
  options.signal?.addEventListener('abort', () => controller.abort(), { once: true });
  const headers: Record<string, string> = { authorization: `Bearer ${options.token ?? TOKEN}` };
  if (options.lastEventId !== undefined) headers['last-event-id'] = String(options.lastEventId);
  const query = options.after === undefined ? '' : `?after=${options.after}`;
  const response = await fetch(`${url}/v1/runs/${runId}/events${query}`, { headers, signal: controller.signal });
  const messages: SseMessage[] = [];
  const comments: string[] = [];
  if (response.status !== 200 || !response.body) return { status: response.status, messages, ended: 'end', comments };
  let stop = false;
  const parser = createParser({
    onEvent: (e) => {
      if (stop) return;
      const message: SseMessage = {
        ...(e.id === undefined ? {} : { id: e.id }),
        ...(e.event === undefined ? {} : { event: e.event }),
        data: JSON.parse(e.data) as RunEvent,
      };
      messages.push(message);
      if (options.stopAfter?.(message, messages)) stop = true;
    },
    onComment: (c) => comments.push(c.trim()),
  });
  const reader = response.body.getReader();
  const decoder = new TextDecoder();
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return { status: 200, messages, ended: 'end', comments };
      parser.feed(decoder.decode(value, { stream: true }));
      if (stop) {
        controller.abort();
        return { status: 200, messages, ended: 'cut', comments };
      }
    }
  } catch (error) {
    if (stop || controller.signal.aborted) return { status: 200, messages, ended: 'cut', comments };
    throw error;
  } finally {
    reader.releaseLock?.();
  }
}

/** Stored events only (those with an id), checking each id is its seq. */
export function storedOf(messages: SseMessage[]): RunEvent[] {
  return messages
    .filter((m) => m.id !== undefined)
    .map((m) => {
      if (Number(m.id) !== m.data.seq || m.event !== m.data.type)
        throw new Error(`id ${m.id} / event ${m.event} do not match the event (seq ${m.data.seq}, ${m.data.type})`);
      return m.data;
    });
}

/** Waits until `check` holds (polling the server), failing after `ms`. */
export async function until<T>(check: () => Promise<T | undefined | false>, what: string, ms = 20_000): Promise<T> {
  const started = Date.now();
  for (;;) {
    const value = await check();
    if (value) return value;
    if (Date.now() - started > ms) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}
