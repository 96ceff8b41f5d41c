// An MCP server's sampling request in a `rein run` with no terminal, under the permission
// policy: `ask` (the default) pauses the run, `rein approve` from a fresh process decides
// it (approved: the call is made again and the run's model answers; `--deny`: refused),
// and `mcp_sampling` rules in the settings or the flags allow or deny it with no question.
// Through the real binary (needs `npm run build`), against a server of our own on the
// official SDK over stdio, whose `summarize` tool asks for two answers.
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { rein as spawnRein, type CliRun } from './spawn.js';
import { makeProject, removeProject, type TempProject } from './project.js';
import { startScriptedServer, type ScriptedServer } from '../../src/testing/index.js';

const BOOKING = fileURLToPath(new URL('../mcp/fixtures/booking-server.mjs', import.meta.url));
const servers: ScriptedServer[] = [];
let dirs: TempProject;

beforeEach(async () => {
  dirs = await makeProject('rein-approve-sampling-');
  await writeFile(
    join(dirs.project, '.mcp.json'),
    JSON.stringify({ mcpServers: { booking: { command: process.execPath, args: [BOOKING] } } }),
  );
});

afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
  await removeProject(dirs);
});

function rein(args: string[]): Promise<CliRun> {
  return spawnRein(args, { cwd: dirs.project, stdin: '', env: { PATH: process.env.PATH, HOME: dirs.home, NO_COLOR: '1' } });
}

type Logged = { type: string; [key: string]: unknown };

async function logOf(runId: string): Promise<Logged[]> {
  return (await rein(['show', runId, '--json'])).stdout
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line) as Logged);
}

async function lastRunId(): Promise<string> {
  return (JSON.parse((await rein(['runs', '--json'])).stdout.trim().split('\n')[0]!) as { id: string }).id;
}

/** The agent calls summarize, then says what it answered; the sampling requests get "one" and "two". */
async function model(): Promise<ScriptedServer> {
  const s = await startScriptedServer({
    script: (request) => {
      const last = request.messages.at(-1);
      const text = String(last?.content ?? '');
      if (text.startsWith('first: ')) return { text: 'one', usage: { prompt_tokens: 100, completion_tokens: 10 } };
      if (text.startsWith('second: ')) return { text: 'two', usage: { prompt_tokens: 200, completion_tokens: 20 } };
      if (last?.role === 'user') return { toolCalls: [{ id: 'call_s', name: 'booking__summarize', arguments: { text: 'the minutes' } }] };
      return { text: request.messages.flatMap((m) => (m.role === 'tool' ? [String(m.content)] : [])).join('\n') };
    },
  });
  servers.push(s);
  return s;
}

describe('rein approve decides a sampling request a run paused for', () => {
  it('asks by default: each request pauses the run, shown; approved, the call is made again and the model answers', async () => {
    const s = await model();
    const paused = await rein(['run', '--allow', 'booking__summarize', '--base-url', s.url, 'summarize the minutes']);
    expect(paused.code).toBe(4);
    const runId = await lastRunId();
    expect(paused.stderr).toContain(
      'rein: call call_s (booking__summarize) waits: MCP server "booking" asks: may the model answer its sampling request (1 message, up to 50 tokens): "first: the minutes"?',
    );
    expect(paused.stderr).toContain(`rein:   decide with: rein approve ${runId} --call call_s [--deny]`);
    expect(paused.stderr).not.toContain('--accept');
    const log = await logOf(runId);
    expect(log.find((e) => e.type === 'elicitation_requested')).toMatchObject({
      toolCallId: 'call_s',
      server: 'booking',
      mode: 'sampling',
      requestHash: expect.stringMatching(/^[0-9a-f]{32}$/),
    });
    expect(log.filter((e) => e.type === 'mcp_sampling')).toEqual([
      expect.objectContaining({ server: 'booking', decision: 'paused', rule: 'default: sampling asks' }),
    ]);
    expect(log.some((e) => e.type === 'tool_finished')).toBe(false);
    expect(log.at(-1)).toMatchObject({ type: 'run_finished', status: 'paused', reason: 'awaiting_approval' });
    // Only the run's turn: nothing was sampled.
    expect(s.requests).toHaveLength(1);

    // Approved: the call is made again, the first request is answered, the second asks.
    const first = await rein(['approve', runId, '--base-url', s.url]);
    expect(first.code).toBe(4);
    expect(first.stderr).toContain('may the model answer its sampling request (1 message, up to 50 tokens): "second: the minutes"?');

    const second = await rein(['approve', runId, '--base-url', s.url]);
    expect(second.stderr).not.toMatch(/error/i);
    expect(second.code).toBe(0);
    expect(second.stdout.trim()).toBe('summaries: one | two');
    const done = await logOf(runId);
    const samplings = done.filter((e) => e.type === 'mcp_sampling');
    expect(samplings.map((e) => [e.decision, e.rule])).toEqual([
      ['paused', 'default: sampling asks'],
      ['allow', 'person: approved'],
      ['paused', 'default: sampling asks'],
      ['allow', 'person: approved'],
      ['allow', 'person: approved'],
    ]);
    const finished = done.find((e) => e.type === 'tool_finished') as { usage?: { input: number } };
    // The last attempt's two answers count in the call: 100 + 200 input tokens.
    expect(finished.usage?.input).toBe(300);
  });

  it('--deny refuses it: the call is made again and the server is told the request was rejected', async () => {
    const s = await model();
    expect((await rein(['run', '--allow', 'booking__summarize', '--base-url', s.url, 'summarize'])).code).toBe(4);
    const runId = await lastRunId();
    const denied = await rein(['approve', runId, '--deny', '--base-url', s.url]);
    expect(denied.code).toBe(0);
    const log = await logOf(runId);
    expect(log.filter((e) => e.type === 'elicitation_answered')).toEqual([
      expect.objectContaining({ toolCallId: 'call_s', action: 'decline' }),
    ]);
    expect(log.filter((e) => e.type === 'mcp_sampling').at(-1)).toMatchObject({ decision: 'deny', rule: 'person: denied' });
    const finished = log.find((e) => e.type === 'tool_finished') as unknown as {
      result: { isError: boolean; content: Array<{ text: string }> };
    };
    expect(finished.result.isError).toBe(true);
    expect(finished.result.content[0]!.text).toMatch(/sampling was refused: a person refused the sampling request/);
    // The model never answered a sampling request.
    expect(s.requests.some((r) => String(r.messages.at(-1)?.content).startsWith('first: '))).toBe(false);
  });

  it('an allow rule in the settings answers it with no question; a deny rule refuses it', async () => {
    await mkdir(join(dirs.project, '.rein'), { recursive: true });
    await writeFile(
      join(dirs.project, '.rein', 'settings.json'),
      JSON.stringify({ permissions: { allow: ['booking__summarize', 'mcp_sampling(book*)'] } }),
    );
    const s = await model();
    const allowed = await rein(['run', '--base-url', s.url, 'summarize']);
    expect(allowed.code).toBe(0);
    expect(allowed.stdout.trim()).toBe('summaries: one | two');
    const log = await logOf(await lastRunId());
    expect(log.filter((e) => e.type === 'mcp_sampling').map((e) => [e.decision, e.rule])).toEqual([
      ['allow', 'allow mcp_sampling(book*)'],
      ['allow', 'allow mcp_sampling(book*)'],
    ]);
    expect(log.some((e) => e.type === 'elicitation_requested')).toBe(false);

    const refused = await rein(['run', '--deny', 'mcp_sampling', '--base-url', s.url, 'summarize']);
    expect(refused.code).toBe(0);
    const denied = await logOf(await lastRunId());
    expect(denied.filter((e) => e.type === 'mcp_sampling')).toEqual([
      expect.objectContaining({ decision: 'deny', rule: 'deny mcp_sampling' }),
    ]);
    const finished = denied.find((e) => e.type === 'tool_finished') as unknown as { result: { content: Array<{ text: string }> } };
    expect(finished.result.content[0]!.text).toMatch(/sampling was refused: sampling requests of MCP server "booking" are denied/);
  });
});
