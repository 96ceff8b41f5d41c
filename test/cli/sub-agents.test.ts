// Sub-agents named in an agent file (`agents: [writer]`): the parent gets a tool per child;
// the child's write pauses the whole tree; `rein approve <root>` from a fresh process shows
// and decides the child's call and finishes the tree; `rein runs`, `show` and `trace` follow it.
import { existsSync, readFileSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { startScriptedServer, type ScriptedServer } from '../../src/testing/index.js';
import { cleanEnv, rein } from './spawn.js';
import { makeProject, removeProject, type TempProject } from './project.js';

let project: TempProject | undefined;
let server: ScriptedServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
  if (project) await removeProject(project);
  project = undefined;
});

const usage = { prompt_tokens: 10, completion_tokens: 5 };

describe('sub-agents of an agent file', () => {
  it('an approval inside a child pauses the tree; rein approve <root> from a fresh process decides the child’s call and finishes it', {
    timeout: 90_000,
  }, async () => {
    server = await startScriptedServer({
      script: (request) => {
        const turn = request.messages.filter((m) => m.role === 'assistant').length;
        const tool = request.messages.find((m) => m.role === 'tool');
        if (request.model === 'lead-model') {
          if (turn === 0)
            return { toolCalls: [{ name: 'writer', arguments: { task: 'write hello to notes.txt' }, id: 'call_lead_1' }], usage };
          return { text: `lead: ${tool?.role === 'tool' ? tool.content : ''}`, usage };
        }
        if (turn === 0)
          return { toolCalls: [{ name: 'write_file', arguments: { path: 'notes.txt', content: 'hello' }, id: 'call_writer_1' }], usage };
        return { text: 'wrote notes.txt', usage };
      },
    });
    project = await makeProject('rein-sub-agents-');
    const agents = join(project.project, '.rein/agents');
    await mkdir(agents, { recursive: true });
    await writeFile(
      join(agents, 'lead.md'),
      `---\nname: lead\ndescription: Leads.\nmodel: openai/lead-model\ntools: [calculate]\nagents: [writer]\n---\nYou lead.\n`,
    );
    await writeFile(
      join(agents, 'writer.md'),
      `---\nname: writer\ndescription: Writes files when asked.\nmodel: openai/writer-model\nbaseUrl: ${server.url}\ntools: [write_file, read_file]\n---\nYou write files.\n`,
    );
    const db = join(project.base, 'runs.db');
    const env = cleanEnv({ HOME: project.home });
    const opts = { cwd: project.project, env };

    const first = await rein(['run', '--agent', 'lead', '--base-url', server.url, '--store', db, 'take notes'], opts);
    expect(first.stderr).not.toMatch(/error/i);
    expect(first.code).toBe(4);
    // The child folded to its line under the parent's call (--children summary, the default); its waiting call said.
    expect(first.stderr).toMatch(/→ writer \{"task":"write hello to notes\.txt"\}/);
    expect(first.stderr).toMatch(/ {2}┊ ⏸ write_file waits for approval/);
    expect(first.stderr).toMatch(
      /\n {2}┊ ⏸ sub-agent writer · paused \(awaiting_approval\) · 1 step · \d+ tool calls? · 15 tokens · [\d.]+ m?s · run_\w+\.\d+\.0\n/,
    );
    expect(first.stderr).not.toMatch(/┊ ↳/);
    expect(first.stderr).toMatch(/rein: waiting for approval: write_file \{"path":"notes\.txt","content":"hello"\}.*\[call_writer_1\]/);
    const rootId = /rein: the run waits for approval: rein approve (run_\w+)/.exec(first.stderr)?.[1];
    expect(rootId).toBeDefined();
    expect(existsSync(join(project.project, 'notes.txt'))).toBe(false);

    const runs = await rein(['runs', '--store', db], opts);
    expect(runs.code).toBe(0);
    const lines = runs.stdout.split('\n');
    const rootLine = lines.findIndex((l) => l.startsWith(`${rootId as string} `));
    expect(lines[rootLine]).toMatch(/paused\s+awaiting_approval/);
    expect(lines[rootLine + 1]).toMatch(new RegExp(`^└ ${rootId as string}\\.\\d+\\.0\\s+paused\\s+awaiting_approval`));

    const approved = await rein(
      ['approve', rootId as string, '--store', db, '--base-url', server.url, '--call', 'call_writer_1', '--children', 'full'],
      opts,
    );
    expect(approved.stderr).not.toMatch(/error/i);
    expect(approved.code).toBe(0);
    expect(approved.stdout.trim()).toBe('lead: wrote notes.txt');
    expect(approved.stderr).toMatch(/ {2}┊ → write_file/);
    // The child continued here is named by its agent (its run_started was in the first process).
    expect(approved.stderr).toMatch(/ {2}┊ ↻ sub-agent writer \(run_\w+\.\d+\.0\) resumed \(paused\)/);
    expect(readFileSync(join(project.project, 'notes.txt'), 'utf8')).toBe('hello');

    const show = await rein(['show', rootId as string, '--store', db], opts);
    expect(show.code).toBe(0);
    expect(show.stdout.trim()).toBe('lead: wrote notes.txt');
    expect(show.stderr).toMatch(/ {2}┊ ↳ sub-agent writer/);
    expect(show.stderr).toMatch(/ {2}┊ ✓ sub-agent done \(final_answer\)/);
    const json = await rein(['show', rootId as string, '--store', db, '--json'], opts);
    const events = json.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { runId: string; depth?: number; type: string });
    expect(events.filter((e) => e.depth === 1 && e.type === 'run_started')).toHaveLength(1);
    expect(events.filter((e) => e.depth === undefined).every((e) => e.runId === rootId)).toBe(true);

    const trace = await rein(['trace', rootId as string, '--store', db], opts);
    expect(trace.code).toBe(0);
    expect(trace.stdout).toMatch(
      new RegExp(`┊ sub-agent run ${rootId as string}\\.\\d+\\.0 · done \\(final_answer\\) · for call call_lead_1 of ${rootId as string}`),
    );
    const spans = (await rein(['trace', rootId as string, '--store', db, '--json'], opts)).stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { traceId: string; spanId: string; parentSpanId?: string; attributes: Record<string, unknown> });
    expect(new Set(spans.map((s) => s.traceId)).size).toBe(1);
    // The child's attempts (it paused, then was resumed by the approve) sit under the lead's spans of the call that ran it.
    const calls = spans
      .filter((s) => s.attributes['gen_ai.tool.call.id'] === 'call_lead_1' && s.attributes['gen_ai.operation.name'] === 'execute_tool')
      .map((s) => s.spanId);
    expect(calls).toHaveLength(2);
    const attempts = spans.filter((s) => s.attributes['gen_ai.operation.name'] === 'invoke_agent');
    expect(attempts).toHaveLength(4);
    expect(attempts.slice(2).map((s) => s.parentSpanId)).toEqual(calls);
  });

  it('--children: each child one line by default, every event with full, nothing with none; a bad view is refused', {
    timeout: 90_000,
  }, async () => {
    server = await startScriptedServer({
      script: (request) => {
        const tools = request.messages.filter((m) => m.role === 'tool');
        if (request.model === 'lead-model') {
          if (tools.length === 0)
            return {
              toolCalls: [
                { name: 'helper', arguments: { task: 'add 1 and 2' }, id: 'call_lead_1' },
                { name: 'helper', arguments: { task: 'add 3 and 4' }, id: 'call_lead_2' },
              ],
              usage,
            };
          return { text: `lead: ${tools.map((t) => (t.role === 'tool' ? t.content : '')).join(' and ')}`, usage };
        }
        const task = String(request.messages.find((m) => m.role === 'user')?.content ?? '');
        if (tools.length === 0)
          return {
            toolCalls: [{ name: 'calculate', arguments: { expression: task.includes('1 and 2') ? '1 + 2' : '3 + 4' }, id: 'call_h' }],
            usage,
          };
        return { text: `sum ${tools[0]?.role === 'tool' ? tools[0].content : ''}`, usage };
      },
    });
    project = await makeProject('rein-sub-agents-');
    const agents = join(project.project, '.rein/agents');
    await mkdir(agents, { recursive: true });
    await writeFile(
      join(agents, 'lead.md'),
      `---\nname: lead\ndescription: Leads.\nmodel: openai/lead-model\ntools: [calculate]\nagents: [helper]\n---\nYou lead.\n`,
    );
    await writeFile(
      join(agents, 'helper.md'),
      `---\nname: helper\ndescription: Adds.\nmodel: openai/helper-model\nbaseUrl: ${server.url}\ntools: [calculate]\n---\nYou add.\n`,
    );
    const opts = { cwd: project.project, env: cleanEnv({ HOME: project.home }) };
    const run = (...flags: string[]) => rein(['run', '--agent', 'lead', '--base-url', server!.url, '--no-store', ...flags, 'add'], opts);

    const summary = await run();
    expect(summary.code).toBe(0);
    expect(summary.stdout.trim()).toBe('lead: sum 3 and sum 7');
    const lines = summary.stderr.split('\n').filter((l) => l.includes('┊'));
    // One line per child, when it ends: name, status, steps, tool calls, tokens, time, run id.
    expect(lines).toHaveLength(2);
    for (const line of lines)
      expect(line).toMatch(
        /^ {2}┊ ✓ sub-agent helper · done \(final_answer\) · 2 steps · 1 tool call · 30 tokens · [\d.]+ m?s · run_[\w.~]+$/,
      );
    expect(new Set(lines.map((l) => l.split(' · ').at(-1))).size).toBe(2);
    expect(summary.stderr).toMatch(/→ helper \{"task":"add 1 and 2"\}/);

    const full = await run('--children', 'full');
    expect(full.code).toBe(0);
    expect(full.stdout.trim()).toBe('lead: sum 3 and sum 7');
    expect(full.stderr.match(/ {2}┊ ↳ sub-agent helper · openai\/helper-model · run_[\w.~]+\n/g)).toHaveLength(2);
    expect(full.stderr).toMatch(/ {2}┊ → calculate \{"expression":"1 \+ 2"\}/);
    expect(full.stderr).toMatch(/ {2}┊ {3}← 7/);
    expect(full.stderr.match(/ {2}┊ ✓ sub-agent done \(final_answer\) · 30 tokens/g)).toHaveLength(2);

    const none = await run('--children', 'none');
    expect(none.code).toBe(0);
    expect(none.stdout.trim()).toBe('lead: sum 3 and sum 7');
    expect(none.stderr).not.toMatch(/┊/);
    expect(none.stderr).toMatch(/→ helper/);

    const bad = await run('--children', 'all');
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/--children expects one of summary, full, none, got "all"/);
  });

  it("a child on the parent's provider reaches the parent's --base-url and --header; a child on another provider keeps its own server, without them", {
    timeout: 90_000,
  }, async () => {
    const script = (request: { model?: string; messages: Array<{ role: string; content?: unknown }> }) => {
      const tools = request.messages.filter((m) => m.role === 'tool');
      if (request.model === 'lead-model') {
        if (tools.length === 0)
          return {
            toolCalls: [
              { name: 'helper', arguments: { task: 'help' }, id: 'call_lead_1' },
              { name: 'reviewer', arguments: { task: 'review' }, id: 'call_lead_2' },
            ],
            usage,
          };
        return { text: `lead: ${tools.map((t) => String(t.content)).join(' + ')}`, usage };
      }
      return { text: request.model === 'helper-model' ? 'helped' : 'reviewed', usage };
    };
    server = await startScriptedServer({ script });
    const other = await startScriptedServer({ script });
    try {
      project = await makeProject('rein-sub-agents-');
      const agents = join(project.project, '.rein/agents');
      await mkdir(agents, { recursive: true });
      await writeFile(
        join(agents, 'lead.md'),
        `---\nname: lead\ndescription: Leads.\nmodel: openai/lead-model\ntools: [calculate]\nagents: [helper, reviewer]\n---\nYou lead.\n`,
      );
      // Neither child names a server: the helper (openai, as the lead) takes the lead's; the reviewer (anthropic) its provider's.
      await writeFile(
        join(agents, 'helper.md'),
        `---\nname: helper\ndescription: Helps.\nmodel: openai/helper-model\ntools: [calculate]\n---\nYou help.\n`,
      );
      await writeFile(
        join(agents, 'reviewer.md'),
        `---\nname: reviewer\ndescription: Reviews.\nmodel: anthropic/reviewer-model\ntools: [calculate]\n---\nYou review.\n`,
      );
      const env = cleanEnv({ HOME: project.home, ANTHROPIC_BASE_URL: new URL(other.url).origin, ANTHROPIC_API_KEY: 'sk-ant-test' });
      const result = await rein(
        ['run', '--agent', 'lead', '--base-url', server.url, '--header', 'x-gateway: lead-route', '--no-store', 'go'],
        { cwd: project.project, env },
      );
      expect(result.stderr, result.stderr).not.toMatch(/error/i);
      expect(result.code).toBe(0);
      expect(result.stdout.trim()).toBe('lead: helped + reviewed');
      const helper = server.received.filter((r) => r.request?.model === 'helper-model');
      expect(helper).toHaveLength(1);
      expect(helper[0]!.headers['x-gateway']).toBe('lead-route');
      expect(server.received.filter((r) => r.request?.model === 'lead-model').every((r) => r.headers['x-gateway'] === 'lead-route')).toBe(
        true,
      );
      expect(server.received.some((r) => r.request?.model === 'reviewer-model')).toBe(false);
      const reviewer = other.received.filter((r) => r.request?.model === 'reviewer-model');
      expect(reviewer).toHaveLength(1);
      expect(reviewer[0]!.api).toBe('anthropic-messages');
      expect(reviewer[0]!.headers['x-gateway']).toBeUndefined();
    } finally {
      await other.close();
    }
  });

  it('a sub-agent that is not an agent file, or one that loops back, is a clear error', async () => {
    project = await makeProject('rein-sub-agents-');
    const agents = join(project.project, '.rein/agents');
    await mkdir(agents, { recursive: true });
    await writeFile(join(agents, 'a.md'), `---\nname: a\ndescription: A.\nmodel: openai/x\nagents: [nobody]\n---\n`);
    await writeFile(join(agents, 'b.md'), `---\nname: b\ndescription: B.\nmodel: openai/x\nagents: [c]\n---\n`);
    await writeFile(join(agents, 'c.md'), `---\nname: c\ndescription: C.\nmodel: openai/x\nagents: [b]\n---\n`);
    const env = cleanEnv({ HOME: project.home, OPENAI_API_KEY: 'sk-test' });
    const missing = await rein(['run', '--agent', 'a', '--no-store', 'x'], { cwd: project.project, env });
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(/there is no agent "nobody"/);
    const loop = await rein(['run', '--agent', 'b', '--no-store', 'x'], { cwd: project.project, env });
    expect(loop.code).toBe(2);
    expect(loop.stderr).toMatch(/agent "c" lists sub-agent "b", which is already its ancestor \(b → c → b\)/);
  });
});
