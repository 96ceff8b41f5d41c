import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { startScriptedServer, type Script, type ScriptedServer } from '../../src/testing/index.js';
import { cleanEnv, isGone, rein, spawned } from './spawn.js';
import { Agent } from '../../src/loop/agent.js';
import { openSqliteStore } from '../../src/store/open.js';
import { seedTools } from '../../src/tools/builtin/index.js';
import { defineTool } from '../../src/tools/define.js';
import { openSqliteFile } from '../../src/store/sqlite-file.js';

const dir = mkdtempSync(join(tmpdir(), 'rein-cli-store-'));
const db = join(dir, 'runs.db');
const servers: ScriptedServer[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});
afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
  for (const child of spawned) expect(isGone(child.pid)).toBe(true);
});

async function server(script: Script): Promise<ScriptedServer> {
  const s = await startScriptedServer({ script });
  servers.push(s);
  return s;
}

describe('stored runs in the CLI', () => {
  it('rein run logs the run; runs lists it, show --json prints its events, replay renders it as it ran', async () => {
    const s = await server([{ toolCalls: [{ name: 'calculate', arguments: { expression: '6 * 7' } }] }, { text: 'It is 42.' }]);
    const run = await rein(['run', '--store', db, '--base-url', s.url, 'what is 6*7?'], { env: cleanEnv() });
    expect(run.code).toBe(0);
    const listed = await rein(['runs', '--store', db, '--json']);
    const [latest] = listed.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { id: string; status: string; reason: string });
    expect(latest).toMatchObject({ status: 'done', reason: 'final_answer' });
    const table = await rein(['runs', '--store', db]);
    expect(table.stdout).toContain(latest!.id);

    const shown = await rein(['show', latest!.id, '--store', db, '--json']);
    const events = shown.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { type: string; seq: number });
    expect(events[0]!.type).toBe('run_started');
    expect(events.at(-1)!.type).toBe('run_finished');
    expect(events.map((e) => e.seq)).toEqual(events.map((_, i) => i));

    const replay = await rein(['replay', latest!.id, '--store', db]);
    expect(replay.code).toBe(0);
    expect(replay.stdout.trim()).toBe('It is 42.');
    expect(replay.stderr).toMatch(/→ calculate \{"expression":"6 \* 7"\}/);
    expect(replay.stderr).toMatch(/← 42 \(\d+ ms\)/);
    expect(replay.stderr).toMatch(/final_answer · 2 steps · 1 tool call/);
  });

  it('rein resume continues a failed run once its cause is fixed, without re-running completed calls', async () => {
    let fixed = false;
    const s = await server((request) => {
      if (request.messages.at(-1)?.role === 'user') return { toolCalls: [{ name: 'calculate', arguments: { expression: '2 + 2' } }] };
      return fixed ? { text: 'Four.' } : { fault: { type: 'status', status: 401 } };
    });
    const failed = await rein(['run', '--store', db, '--json', '--base-url', s.url, 'two plus two'], { env: cleanEnv() });
    expect(failed.code).toBe(1);
    const runId = (JSON.parse(failed.stdout.trim().split('\n')[0]!) as { runId: string }).runId;
    fixed = true;
    const resumed = await rein(['resume', runId, '--store', db, '--base-url', s.url], { env: cleanEnv() });
    expect(resumed.code).toBe(0);
    expect(resumed.stdout.trim()).toBe('Four.');
    expect(s.received.filter((r) => r.request?.messages.at(-1)?.role === 'user')).toHaveLength(1);
    const shown = await rein(['show', runId, '--store', db, '--json']);
    const types = shown.stdout
      .trim()
      .split('\n')
      .map((l) => (JSON.parse(l) as { type: string }).type);
    expect(types.filter((t) => t === 'tool_finished')).toHaveLength(1);
    expect(types).toContain('run_resumed');
    // A run that is over: a usage error that says why, not a failed run's summary line.
    const again = await rein(['resume', runId, '--store', db, '--base-url', s.url], { env: cleanEnv() });
    expect(again.code).toBe(2);
    expect(again.stderr).toMatch(
      new RegExp(
        `run ${runId} is done \\(final_answer\\): there is nothing to resume\\. rein resume continues a run that crashed, failed, was aborted or is paused`,
      ),
    );
    expect(again.stderr).not.toMatch(/■|fatal_error/);
    expect(again.stdout).toBe('');
  });

  it('rein approve continues, from another process, a run paused for approval; a second decision is refused', async () => {
    const s = await server((request) =>
      request.messages.at(-1)?.role === 'user' ? { toolCalls: [{ name: 'roll_dice', arguments: { sides: 6 } }] } : { text: 'Rolled.' },
    );
    const store = await openSqliteStore({ path: db });
    let runId: string;
    try {
      const agent = new Agent({
        model: 'openai/gpt-4o-mini',
        modelConfig: { baseUrl: s.url },
        tools: seedTools().filter((t) => t.name === 'roll_dice'),
        store,
        approvalPolicy: () => 'ask',
      });
      const paused = agent.run('roll a die');
      runId = paused.runId;
      expect(await paused).toMatchObject({ status: 'paused', reason: 'awaiting_approval' });
    } finally {
      await store.close();
    }
    const approved = await rein(['approve', runId, '--store', db, '--base-url', s.url, '--reason', 'fine'], { env: cleanEnv() });
    expect(approved.code).toBe(0);
    expect(approved.stdout.trim()).toBe('Rolled.');
    expect(approved.stderr).toMatch(/→ roll_dice/);
    const again = await rein(['approve', runId, '--store', db, '--base-url', s.url], { env: cleanEnv() });
    expect(again.code).toBe(2);
    expect(again.stderr).toMatch(
      new RegExp(
        `run ${runId} is not waiting for approval \\(it is done: final_answer\\): there is nothing to approve or deny\\. .*rein runs --status paused`,
      ),
    );
    expect(again.stderr).not.toMatch(/■|fatal_error/);
  });

  it('rein resume refuses a run whose tools the rein command does not have, naming them', async () => {
    const s = await server([{ toolCalls: [{ name: 'deploy', arguments: {} }] }, { fault: { type: 'status', status: 401 } }]);
    const store = await openSqliteStore({ path: db });
    let runId: string;
    try {
      const deploy = defineTool({
        name: 'deploy',
        description: 'Deploys.',
        parameters: { type: 'object', properties: {} },
        execute: () => 'deployed',
      });
      const failed = new Agent({ model: 'openai/gpt-4o-mini', modelConfig: { baseUrl: s.url }, tools: [deploy], store }).run('ship it');
      runId = failed.runId;
      expect(await failed).toMatchObject({ status: 'failed' });
    } finally {
      await store.close();
    }
    const out = await rein(['resume', runId, '--store', db, '--base-url', s.url], { env: cleanEnv() });
    expect(out.code).toBe(2);
    expect(out.stderr).toMatch(/used tools the rein command does not have \(deploy\): continue it from the program that defines them/);
  });

  it('rein runs --json reports a bad flag value as a JSON line on stdout too', async () => {
    const out = await rein(['runs', '--json', '--status', 'bogus', '--store', db]);
    expect(out.code).toBe(2);
    const last = JSON.parse(out.stdout.trim().split('\n').at(-1)!) as {
      type: string;
      result: { error: { code: string; message: string } };
    };
    expect(last).toMatchObject({ type: 'run_finished', result: { error: { code: 'config' } } });
    expect(last.result.error.message).toMatch(/--status expects one of .*got "bogus"/);
  });

  it('rein resume of a run recorded without an agent configuration says so, not "See --help"', async () => {
    const store = await openSqliteStore({ path: db });
    const id = `run_noconfig_${process.pid}`;
    try {
      await store.createRun({ id, model: 'openai/gpt-4o-mini', config: null, configHash: '' });
    } finally {
      await store.close();
    }
    const out = await rein(['resume', id, '--store', db, '--base-url', 'http://127.0.0.1:9/v1'], { env: cleanEnv() });
    expect(out.code).toBe(2);
    expect(out.stderr).toMatch(
      new RegExp(`run ${id} has no recorded agent configuration .*: continue it from the program that started it`),
    );
    expect(out.stderr).not.toMatch(/See --help/);
  });

  it('a bug while listing runs is reported as a failure, not as a flag mistake', async () => {
    // A record whose totals lack their usage (written by hand, or by another version).
    const broken = join(dir, 'broken.db');
    const store = await openSqliteStore({ path: broken });
    const id = `run_broken_${process.pid}`;
    try {
      await store.createRun({ id, model: 'openai/gpt-4o-mini', config: {}, configHash: '' });
    } finally {
      await store.close();
    }
    const raw = openSqliteFile(broken, 'test');
    try {
      raw.prepare('UPDATE runs SET totals = ? WHERE id = ?').run(JSON.stringify({ steps: 1 }), id);
    } finally {
      raw.close();
    }
    const out = await rein(['runs', '--store', broken]);
    expect(out.stderr).not.toMatch(/See --help/);
    expect(out.code).not.toBe(2);
  });

  it('a store that cannot be opened is named without its password', async () => {
    const url = 'postgres://rein:secretpw@127.0.0.1:1/rein';
    const flag = await rein(['run', '--store', url, '--base-url', 'http://127.0.0.1:9/v1', 'hi'], { env: cleanEnv() });
    const fromEnv = await rein(['run', '--base-url', 'http://127.0.0.1:9/v1', 'hi'], { env: cleanEnv({ REIN_DATABASE_URL: url }) });
    for (const out of [flag, fromEnv]) {
      expect(out.code).toBe(2);
      expect(out.stderr).toMatch(/cannot open the run store postgres:\/\/…@127\.0\.0\.1:1\/rein/);
      expect(out.stderr).not.toContain('secretpw');
      expect(out.stdout).not.toContain('secretpw');
    }
  });

  it('an unknown run is a clear error', async () => {
    const out = await rein(['show', 'run_nope', '--store', db]);
    expect(out.code).toBe(1);
    expect(out.stderr).toMatch(/there is no run run_nope in the store \(rein runs lists them\)/);
  });
});
