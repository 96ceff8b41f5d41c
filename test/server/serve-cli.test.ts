// `rein serve` as a command: its first stdout line, the token rules, and SIGTERM (streams
// end cleanly, running runs are left to continue on the next start, and do).
import { readFile, stat, writeFile, chmod, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { startScriptedServer, type ScriptedServer } from '../../src/testing/index.js';
import { SqliteStore } from '../../src/store/sqlite.js';
import type { RunEvent } from '../../src/events.js';
import { agentFile, call, makeServedProject, readStream, storedOf, until } from './helpers.js';
import { reapServers, serveRefuses, startServe } from './serve-process.js';
import { toolLoop } from './scripts.js';

let model: ScriptedServer | undefined;
let base: string | undefined;
afterEach(async () => {
  await reapServers();
  await model?.close();
  model = undefined;
  if (base) await rm(base, { recursive: true, force: true });
  base = undefined;
});

function envOf(home: string, extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  return { PATH: process.env.PATH, HOME: home, NO_COLOR: '1', ...extra };
}

describe('rein serve', () => {
  it('prints {"url":"http://127.0.0.1:N"} as its first stdout line; makes .rein/server-token (0600) on the first start and names it on stderr, never printing it', async () => {
    const p = await makeServedProject({});
    base = p.base;
    const first = await startServe([], { cwd: p.project, env: envOf(p.home) });
    expect(first.stdout().split('\n')[0]).toMatch(/^\{"url":"http:\/\/127\.0\.0\.1:\d+"\}$/);
    const file = join(p.project, '.rein/server-token');
    const token = (await readFile(file, 'utf8')).trim();
    expect(token.length).toBeGreaterThanOrEqual(32);
    expect((await stat(file)).mode & 0o777).toBe(0o600);
    // stderr is a separate pipe: its line may arrive after the URL on stdout.
    await until(async () => first.stderr().includes(file), `stderr naming ${file}`);
    expect(first.stderr() + first.stdout()).not.toContain(token);
    expect(await call(first.url, '/healthz', { token: null })).toMatchObject({ status: 200 });
    expect((await call(first.url, '/v1/runs', { token })).status).toBe(200);
    expect((await call(first.url, '/v1/runs', { token: `${token}x` })).status).toBe(401);
    first.child.kill('SIGTERM');
    expect((await first.exited).code).toBe(0);
    // The second start keeps the same token.
    const second = await startServe([], { cwd: p.project, env: envOf(p.home) });
    expect((await call(second.url, '/v1/runs', { token })).status).toBe(200);
    second.child.kill('SIGTERM');
    await second.exited;
  });

  it('on an address other than loopback, refuses to start without a token of at least 32 characters set up beforehand', async () => {
    const p = await makeServedProject({});
    base = p.base;
    const none = await serveRefuses(['--host', '0.0.0.0'], { cwd: p.project, env: envOf(p.home) });
    expect(none.code).toBe(2);
    expect(none.stderr).toMatch(
      /--host 0\.0\.0\.0 is not a loopback address: the server refuses to start without a token of at least 32 characters/,
    );
    expect(none.stdout).toBe('');
    const short = await serveRefuses(['--host', '0.0.0.0'], { cwd: p.project, env: envOf(p.home, { REIN_SERVER_TOKEN: 'short-token' }) });
    expect(short.code).toBe(2);
    expect(short.stderr).toMatch(/has 11 characters: at least 32 are needed/);
    await writeFile(join(p.project, '.rein/server-token'), 'a'.repeat(40));
    await chmod(join(p.project, '.rein/server-token'), 0o644);
    const loose = await serveRefuses([], { cwd: p.project, env: envOf(p.home) });
    expect(loose.code).toBe(2);
    expect(loose.stderr).toMatch(/can be read by other users \(mode 644\): chmod 600/);
    expect((await serveRefuses(['--port', 'eighty'], { cwd: p.project, env: envOf(p.home) })).stderr).toMatch(
      /--port expects a port number from 0 to 65535, got "eighty"/,
    );
    expect((await serveRefuses(['--base-url', 'ftp://x'], { cwd: p.project, env: envOf(p.home) })).stderr).toMatch(
      /--base-url must be an http:\/\/ or https:\/\/ URL/,
    );
  });

  it('SIGTERM: streams end cleanly, the process exits 0, the running run stays running in the store; the next start continues it and the stream resumes with no gap', async () => {
    let answers = 0;
    let onSecondAnswer!: () => void;
    const secondAnswer = new Promise<void>((r) => (onSecondAnswer = r));
    const script = toolLoop({ calls: 6, delayMs: 150 });
    model = await startScriptedServer({
      script: (request, info) => {
        if (++answers === 2) onSecondAnswer();
        return script(request, info);
      },
    });
    const p = await makeServedProject({ calc: agentFile('calc', { tools: '[calculate]', limits: '{ maxSteps: 20 }' }) });
    base = p.base;
    const token = 't'.repeat(40);
    const env = envOf(p.home, { REIN_SERVER_TOKEN: token });
    const first = await startServe(['--base-url', model.url], { cwd: p.project, env });
    const { body } = await call(first.url, '/v1/runs', { token, body: { agent: 'calc', input: 'six steps' } });
    const runId = body.runId as string;
    const following = readStream(first.url, runId, { token });
    await secondAnswer;
    first.child.kill('SIGTERM');
    const cutShort = await following;
    expect(cutShort.ended).toBe('end');
    expect(cutShort.comments.some((c) => /the server is stopping/.test(c))).toBe(true);
    const before = storedOf(cutShort.messages);
    expect(before.length).toBeGreaterThan(0);
    expect(before.some((e) => e.type === 'run_finished')).toBe(false);
    expect(await first.exited).toEqual({ code: 0, signal: null });
    expect(first.stderr()).toMatch(/1 run left running in the store, to continue on the next start/);
    const store = new SqliteStore({ path: join(p.project, '.rein/rein.db') });
    try {
      expect((await store.getRun(runId))?.status).toBe('running');
    } finally {
      await store.close();
    }

    const second = await startServe(['--base-url', model.url], { cwd: p.project, env });
    const rest = await readStream(second.url, runId, { token, lastEventId: (before.at(-1) as RunEvent).seq });
    const after = storedOf(rest.messages);
    const all = [...before, ...after];
    expect(all.map((e) => e.seq)).toEqual(all.map((_, i) => i));
    expect(after.some((e) => e.type === 'run_resumed')).toBe(true);
    expect(after.at(-1)).toMatchObject({ type: 'run_finished', status: 'done' });
    const done = await until(
      async () => ((await call(second.url, `/v1/runs/${runId}`, { token })).body.record.status === 'done' ? true : undefined),
      'the run to be done',
    );
    expect(done).toBe(true);
    expect(second.stderr()).toMatch(new RegExp(`continuing 1 run from its log: ${runId}`));
    // What ran before the stop did not run again: each call's result is logged once.
    const finishedIds = all.filter((e) => e.type === 'tool_finished').map((e) => (e as { toolCallId: string }).toolCallId);
    expect(new Set(finishedIds).size).toBe(finishedIds.length);
    second.child.kill('SIGTERM');
    expect((await second.exited).code).toBe(0);
  });
});
