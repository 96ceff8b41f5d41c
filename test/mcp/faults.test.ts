// Servers that crash, hang, never answer, change their tools, forget sessions or freeze:
// the host reports each as an error the model can act on, and recovers.
import { existsSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { startMcp } from '../../src/mcp/host.js';
import type { McpHost } from '../../src/mcp/host.js';
import { createDispatcher } from '../../src/tools/dispatch.js';
import type { DispatchOutcome } from '../../src/tools/types.js';
import {
  EVERYTHING,
  HTTP_FIXTURE,
  fixture,
  host,
  nextToolChange,
  startHttpServer,
  tempDir,
  textOf,
  trackPids,
  waitForState,
} from './helpers.js';

/** Runs one call through rein's dispatcher, as an agent would. */
function dispatch(mcp: McpHost, name: string, args: Record<string, unknown>): Promise<DispatchOutcome> {
  const dispatcher = createDispatcher({ get: (n) => mcp.tools().find((t) => t.name === n), names: () => mcp.tools().map((t) => t.name) });
  const call = { type: 'tool_call' as const, id: `call_${name}`, name, arguments: args, rawArguments: JSON.stringify(args) };
  return dispatcher.dispatch(call, { signal: new AbortController().signal, runId: 'run', idempotencyKey: 'key' });
}

const text = (outcome: DispatchOutcome): string => textOf(outcome.result.content);

describe('a server that crashes mid-call', () => {
  it('answers an error result, keeps its tools while down, reconnects, then calls succeed', async () => {
    const mcp = await host({ f: fixture() }, { reconnect: { initialDelayMs: 400, maxDelayMs: 1000 } });
    const before = await mcp.callTool('f', 'whoami');
    const oldPid = Number(textOf(before.content));

    const crashed = await dispatch(mcp, 'f__crash', {});
    expect(crashed.result.isError).toBe(true);
    expect(text(crashed)).toContain('MCP server "f" crashed: its process exited with code 3');
    expect(text(crashed)).toContain('fixture: crashing on purpose');
    expect(text(crashed)).toContain('may or may not have taken effect');
    expect(text(crashed)).toMatch(/rein is reconnecting \(next attempt in \d+ s\); try again shortly or use another tool/);

    // Down: the tools stay, and answer why.
    expect(mcp.tools().some((t) => t.name === 'f__echo')).toBe(true);
    expect(mcp.status()[0]?.state).toBe('reconnecting');
    const down = await dispatch(mcp, 'f__echo', { text: 'hi' });
    expect(down.result.isError).toBe(true);
    expect(text(down)).toMatch(/MCP server "f" is reconnecting \(attempt 1, last error: crashed: its process exited with code 3/);

    await waitForState(mcp, 'f', 'connected');
    const after = await dispatch(mcp, 'f__echo', { text: 'back again' });
    expect(after.result).toMatchObject({ isError: false, content: [{ type: 'text', text: 'back again' }] });
    const newPid = Number(textOf((await mcp.callTool('f', 'whoami')).content));
    expect(newPid).not.toBe(oldPid);
  });
});

describe('a server that never answers', () => {
  it('a hanging call times out within the configured time and is cancelled on the server', async () => {
    const state = await tempDir();
    const mcp = await host({ f: fixture({ FIXTURE_STATE_DIR: state }, { timeoutMs: 300 }) });
    const pid = mcp.status()[0]?.pid;
    const started = performance.now();
    const outcome = await dispatch(mcp, 'f__hang', {});
    expect(performance.now() - started).toBeLessThan(5000);
    expect(outcome.errorCode).toBe('tool_timeout');
    expect(text(outcome)).toBe('tool "f__hang" timed out after 300 ms');
    await vi.waitFor(() => expect(existsSync(join(state, `cancelled-${pid}`))).toBe(true), { timeout: 5000, interval: 20 });
    // The connection survives a timeout.
    expect(textOf((await mcp.callTool('f', 'echo', { text: 'still here' })).content)).toBe('still here');
  });

  it('a direct call with a timeout rejects with code timeout', async () => {
    const mcp = await host({ f: fixture() });
    await expect(mcp.callTool('f', 'hang', {}, { timeoutMs: 200 })).rejects.toMatchObject({
      code: 'timeout',
      message: expect.stringContaining('did not answer tools/call "hang" within 200 ms; the request was cancelled on the server'),
    });
  });

  it('a server that never finishes starting fails after its start-up timeout, without delaying the others', async () => {
    const started = performance.now();
    const mcp = await host({ silent: fixture({ FIXTURE_SILENT: '1' }, { startupTimeoutMs: 600 }), ok: fixture() }, { reconnect: false });
    expect(performance.now() - started).toBeLessThan(10_000);
    const [silent, ok] = mcp.status();
    expect(silent).toMatchObject({
      name: 'silent',
      state: 'failed',
      lastError: expect.stringContaining('did not finish starting within 600 ms'),
    });
    expect(silent?.lastError).toContain('silent server, reading and never answering');
    expect(silent?.pid).toBeUndefined();
    expect(ok?.state).toBe('connected');
    await expect(mcp.callTool('silent', 'echo', { text: 'x' })).rejects.toMatchObject({
      code: 'mcp_unavailable',
      message: expect.stringContaining('failed to start'),
    });
  });

  it('a server whose event loop freezes is found out by ping, killed and restarted', async () => {
    const mcp = await host({ f: fixture() }, { pingIntervalMs: 200 });
    const oldPid = mcp.status()[0]?.pid;
    await mcp.callTool('f', 'freeze');
    await waitForState(mcp, 'f', 'reconnecting');
    expect(mcp.status()[0]?.lastError).toMatch(/did not answer 2 pings in a row|ping failed/);
    await waitForState(mcp, 'f', 'connected');
    expect(mcp.status()[0]?.pid).not.toBe(oldPid);
    expect(textOf((await mcp.callTool('f', 'echo', { text: 'thawed' })).content)).toBe('thawed');
  });
});

describe('a server whose tool list changes', () => {
  it('the host follows notifications/tools/list_changed, and keeps its array while nothing changes', async () => {
    const mcp = await host({ f: fixture() });
    const first = mcp.tools();
    await mcp.callTool('f', 'echo', { text: 'x' });
    expect(mcp.tools()).toBe(first);

    const added = nextToolChange(mcp);
    await mcp.callTool('f', 'add_tool', { name: 'fresh' });
    await added;
    expect(mcp.tools().map((t) => t.name)).toContain('f__fresh');
    const outcome = await dispatch(mcp, 'f__fresh', {});
    expect(text(outcome)).toBe('ran fresh');

    const removed = nextToolChange(mcp);
    await mcp.callTool('f', 'remove_tool', { name: 'fresh' });
    await removed;
    expect(mcp.tools().map((t) => t.name)).not.toContain('f__fresh');
    expect(mcp.status()[0]?.toolCount).toBe(first.length - 2);
  });
});

describe('three servers, one broken in config', () => {
  it('starts the other two and names the broken one with its file and key', async () => {
    const project = await tempDir();
    const home = await tempDir();
    const file = join(project, '.mcp.json');
    await writeFile(
      file,
      JSON.stringify({
        mcpServers: {
          everything: { command: process.execPath, args: [EVERYTHING, 'stdio'] },
          broken: { args: ['--port', '1'], timeoutMS: 5 },
          faulty: { command: process.execPath, args: ['${FIXTURE_PATH}'], env: { GREETING: '${GREETING:-hello}' } },
        },
      }),
    );
    const mcp = await startMcp({ cwd: project, home, env: { ...process.env, FIXTURE_PATH: fixture().args?.[0] } });
    trackPids(mcp);
    try {
      expect(mcp.diagnostics).toEqual(
        expect.arrayContaining([
          expect.objectContaining({
            severity: 'error',
            file,
            key: 'mcpServers.broken.command',
            server: 'broken',
            message: expect.stringContaining('is missing'),
          }),
          expect.objectContaining({
            severity: 'error',
            file,
            key: 'mcpServers.broken.timeoutMS',
            message: expect.stringContaining('not a known field'),
          }),
        ]),
      );
      const byName = Object.fromEntries(mcp.status().map((s) => [s.name, s]));
      expect(byName.everything?.state).toBe('connected');
      expect(byName.faulty?.state).toBe('connected');
      expect(byName.broken).toMatchObject({
        state: 'failed',
        transport: 'unknown',
        source: file,
        lastError: expect.stringContaining(`${file}: mcpServers.broken.command is missing`),
      });
      expect(textOf((await mcp.callTool('everything', 'echo', { message: 'a' })).content)).toBe('Echo: a');
      expect(textOf((await mcp.callTool('faulty', 'echo', { text: 'b' })).content)).toBe('b');
      await expect(mcp.callTool('broken', 'x')).rejects.toMatchObject({
        code: 'mcp_unavailable',
        message: expect.stringContaining('configuration is broken'),
      });
    } finally {
      await mcp.close();
    }
  });

  it('a command that does not exist is reported, not thrown', async () => {
    const mcp = await host({ missing: { command: 'rein-no-such-mcp-server' }, ok: fixture() }, { reconnect: false });
    const [missing, ok] = mcp.status();
    expect(missing).toMatchObject({
      state: 'failed',
      lastError: expect.stringContaining('cannot start "rein-no-such-mcp-server": not found (check "command" and PATH'),
    });
    expect(ok?.state).toBe('connected');
  });
});

describe('an HTTP server that forgets its sessions', () => {
  it('initializes a new session and retries the call once', async () => {
    const { url } = await startHttpServer([HTTP_FIXTURE], /listening (\d+)/);
    const mcp = await host({ remote: { url: `${url}/mcp`, type: 'http' } });
    expect(textOf((await mcp.callTool('remote', 'echo', { text: 'one' })).content)).toBe('one');
    await mcp.callTool('remote', 'forget_sessions');
    await vi.waitFor(async () => expect(await (await fetch(`${url}/stats`)).json()).toMatchObject({ sessions: 0 }), {
      timeout: 5000,
      interval: 20,
    });

    const again = await mcp.callTool('remote', 'echo', { text: 'two' });
    expect(textOf(again.content)).toBe('two');
    expect(await (await fetch(`${url}/stats`)).json()).toMatchObject({ initializations: 2, sessions: 1 });
    expect(mcp.status()[0]).toMatchObject({ state: 'connected', transport: 'http' });
  });

  it('an HTTP server that goes away is reported, retried with backoff, and reconnected to when it is back', async () => {
    const { url, child } = await startHttpServer([HTTP_FIXTURE], /listening (\d+)/);
    const port = new URL(url).port;
    const mcp = await host({ remote: { url: `${url}/mcp` } }, { reconnect: { initialDelayMs: 100, maxDelayMs: 200 } });
    child.kill('SIGKILL');
    await new Promise((resolve) => child.once('exit', resolve));
    await expect(mcp.callTool('remote', 'echo', { text: 'x' })).rejects.toMatchObject({
      code: 'mcp_unavailable',
      message: expect.stringContaining('lost the connection (fetch failed (connect ECONNREFUSED'),
    });
    expect(mcp.status()[0]?.state).toBe('reconnecting');
    await vi.waitFor(() => expect(mcp.status()[0]?.attempts).toBeGreaterThan(1), { timeout: 5000, interval: 20 });

    await startHttpServer([HTTP_FIXTURE], /listening (\d+)/, Number(port));
    await waitForState(mcp, 'remote', 'connected');
    expect(textOf((await mcp.callTool('remote', 'echo', { text: 'back' })).content)).toBe('back');
  });
});
