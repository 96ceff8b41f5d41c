// No secret value appears in a stored run: a real agent, a real SQLite file, and the
// file's bytes searched for every secret the run handled.
import { existsSync, readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { RunEvent } from '../../src/events.js';
import { Agent } from '../../src/loop/agent.js';
import { startScriptedServer, type ScriptedServer } from '../../src/testing/index.js';
import { createRedactor } from '../../src/security/redact.js';
import { redactingLog, redactingStore } from '../../src/security/redacting-store.js';
import { openSqliteStore } from '../../src/store/open.js';
import { MemoryRunStore } from '../../src/store/memory.js';
import type { RunStore } from '../../src/store/types.js';
import { defineTool } from '../../src/tools/define.js';
import { fake } from './fake-secrets.js';

const servers: ScriptedServer[] = [];
const dirs: string[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
  await Promise.all(dirs.splice(0).map((d) => rm(d, { recursive: true, force: true })));
});

const env = { OPENAI_API_KEY: 'gateway-key-0f1e2d3c4b5a', DEPLOY_PASSWORD: 'correct-horse-battery-staple' };
const secrets = [
  env.OPENAI_API_KEY,
  env.DEPLOY_PASSWORD,
  fake.githubClassic,
  fake.jwt,
  fake.awsAccessKey,
  fake.awsSecret,
  fake.bearer,
  fake.pem,
  'pg-secret-77',
];

/** A tool that "fetches" a page and echoes credentials back, as real tools sometimes do. */
function fetchTool(logged: string[]) {
  return defineTool({
    name: 'fetch',
    description: 'Fetches a URL.',
    parameters: { type: 'object', properties: { url: { type: 'string' }, headers: { type: 'object' } }, required: ['url'] },
    risk: 'read',
    execute: (args, ctx) => {
      ctx.log(`fetching with ${JSON.stringify(args.headers)}`, { headers: args.headers });
      logged.push(JSON.stringify(args));
      return `200 OK\nX-Token: ${fake.githubClassic}\naws_access_key_id = ${fake.awsAccessKey}\naws_secret_access_key = ${fake.awsSecret}\n${fake.pem}`;
    },
  });
}

async function scriptedRun(store: RunStore, logSink: (m: string, d?: Record<string, unknown>) => void) {
  const server = await startScriptedServer({
    script: [
      {
        toolCalls: [
          {
            name: 'fetch',
            arguments: {
              url: 'postgres://app:pg-secret-77@db/x',
              headers: { Authorization: `Bearer ${fake.bearer}`, 'X-Deploy': env.DEPLOY_PASSWORD },
            },
          },
        ],
      },
      { text: `Here is the session token: ${fake.jwt}` },
    ],
  });
  servers.push(server);
  const redactor = createRedactor({ env });
  const logged: string[] = [];
  const agent = new Agent({
    model: server.model(),
    system: `Use the gateway key ${env.OPENAI_API_KEY} when asked.`,
    tools: [fetchTool(logged)],
    store: redactingStore(store, redactor),
    log: redactingLog(logSink, redactor),
  });
  const handle = agent.run(`Fetch the status page. The deploy password is ${env.DEPLOY_PASSWORD}.`);
  const live: RunEvent[] = [];
  for await (const event of handle) live.push(event);
  return { result: await handle, live, server, logged, runId: handle.runId };
}

function leaks(text: string): string[] {
  return secrets.filter((s) => text.includes(s) || text.includes(JSON.stringify(s).slice(1, -1)));
}

describe('no secret value appears in a stored run', () => {
  it('the SQLite file holds none of the secrets the run handled, and the run still reads back whole', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'rein-redaction-'));
    dirs.push(dir);
    const path = join(dir, 'rein.db');
    const store = await openSqliteStore({ path });
    const logLines: string[] = [];
    const { result, live, server, logged, runId } = await scriptedRun(store, (m, d) => logLines.push(`${m} ${JSON.stringify(d)}`));
    expect(result).toMatchObject({ status: 'done', reason: 'final_answer' });

    // The run itself used the real values: the tool got them and the model saw its output.
    expect(logged[0]).toContain(env.DEPLOY_PASSWORD);
    expect(JSON.stringify(server.requests.at(-1)!.messages)).toContain(fake.githubClassic);
    expect(leaks(JSON.stringify(live))).not.toEqual([]);

    // What was written down holds none of them.
    const stored = await store.loadEvents(runId);
    const storedText = JSON.stringify(stored) + JSON.stringify(await store.getRun(runId));
    expect(leaks(storedText)).toEqual([]);
    for (const kind of [
      'env:OPENAI_API_KEY',
      'env:DEPLOY_PASSWORD',
      'github_token',
      'jwt',
      'aws_access_key',
      'aws_secret_key',
      'bearer_token',
      'private_key',
      'url_password',
    ]) {
      expect(storedText).toContain(`[REDACTED:${kind}]`);
    }
    expect(leaks(logLines.join('\n'))).toEqual([]);
    expect(logLines.join('\n')).toContain('[REDACTED:bearer_token]');
    expect(stored.map((e) => e.type)).toEqual(
      live.filter((e) => !['text_delta', 'thinking_delta', 'tool_call_delta', 'tool_progress'].includes(e.type)).map((e) => e.type),
    );

    await store.close();
    const bytes = ['', '-wal', '-shm']
      .filter((suffix) => existsSync(path + suffix))
      .map((suffix) => readFileSync(path + suffix).toString('latin1'));
    expect(bytes.length).toBeGreaterThan(0);
    expect(leaks(bytes.join('\n'))).toEqual([]);
    expect(bytes.join('\n')).toContain('[REDACTED:github_token]');
  });

  it('events without secrets are stored as the very objects the loop emitted', async () => {
    const inner = new MemoryRunStore();
    const appended: RunEvent[][] = [];
    // Sees what reaches the inner store: the redacting store's output.
    const spy: RunStore = {
      createRun: (run) => inner.createRun(run),
      acquireLease: (runId) => inner.acquireLease(runId),
      append: (runId, epoch, events, options) => {
        appended.push([...events]);
        return inner.append(runId, epoch, events, options);
      },
      loadEvents: (runId, fromSeq) => inner.loadEvents(runId, fromSeq),
      getRun: (runId) => inner.getRun(runId),
      listRuns: (filter) => inner.listRuns(filter),
      updateRun: (runId, epoch, patch) => inner.updateRun(runId, epoch, patch),
      close: () => inner.close(),
    };
    const { live } = await scriptedRun(spy, () => {});
    const flat = appended.flat();
    const clean = flat.filter((e) => leaks(JSON.stringify(live.find((l) => l.seq === e.seq && l.type === e.type))).length === 0);
    expect(clean.length).toBeGreaterThan(0);
    for (const event of clean) expect(live).toContain(event);
    const dirty = flat.filter((e) => !clean.includes(e));
    expect(dirty.length).toBeGreaterThan(0);
    for (const event of dirty) expect(live).not.toContain(event);
  });
});
