// `rein agents`, and `rein run --agent` / `rein chat --agent` with an agent file.
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { startScriptedServer, text, toolCall } from '../../src/testing/index.js';
import { cleanEnv, rein } from './spawn.js';
import { makeProject, removeProject, type TempProject } from './project.js';

let project: TempProject | undefined;
afterEach(async () => {
  if (project) await removeProject(project);
  project = undefined;
});

async function withAgents(files: Record<string, string>): Promise<TempProject> {
  project = await makeProject('rein-agents-cli-');
  await mkdir(join(project.project, '.rein/agents'), { recursive: true });
  for (const [name, body] of Object.entries(files)) await writeFile(join(project.project, '.rein/agents', name), body);
  return project;
}

const reviewer = `---
name: reviewer
description: Reviews things carefully.
model: openai/reviewer-model
tools: [calculate]
limits: { maxSteps: 4 }
---
You are the reviewer agent.
`;

describe('rein agents', () => {
  it('lists default and the agent files; a broken file is named on stderr with its field, and the exit code is 1', async () => {
    const p = await withAgents({ 'reviewer.md': reviewer, 'broken.md': '---\nname: broken\nmodel: openai/m\n---\n' });
    const out = await rein(['agents'], { cwd: p.project, env: cleanEnv({ HOME: p.home }) });
    expect(out.code).toBe(1);
    expect(out.stdout).toMatch(/^AGENT\s+MODEL\s+TOOLS\s+MODE\s+DESCRIPTION\n/);
    expect(out.stdout).toMatch(/default\s+openai\/gpt-4o-mini\s+all\s+default\s+what rein run builds here/);
    expect(out.stdout).toMatch(/reviewer\s+openai\/reviewer-model\s+calculate\s+default\s+Reviews things carefully\./);
    expect(out.stderr).toContain(
      `rein: skipped agent ${join(p.project, '.rein/agents/broken.md')} (description): missing: say what the agent does and when to use it`,
    );
    const json = await rein(['agents', '--json'], { cwd: p.project, env: cleanEnv({ HOME: p.home, REIN_MODEL: 'ollama/llama3.1' }) });
    const lines = json.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(lines).toEqual([
      expect.objectContaining({ type: 'agent', name: 'default', model: 'ollama/llama3.1' }),
      expect.objectContaining({ type: 'agent', name: 'reviewer', tools: ['calculate'], file: join(p.project, '.rein/agents/reviewer.md') }),
      expect.objectContaining({ type: 'diagnostic', field: 'description', severity: 'error' }),
    ]);
  });
});

describe('--agent', () => {
  it('rein run --agent runs the file: its model, system prompt, tools and limits; flags given on the command line win', async () => {
    const p = await withAgents({ 'reviewer.md': reviewer });
    const server = await startScriptedServer({ script: [toolCall('calculate', { expression: '2 + 2' }), text('four'), text('again')] });
    try {
      const out = await rein(['run', '--agent', 'reviewer', '--base-url', server.url, '--no-store', 'add'], {
        cwd: p.project,
        env: cleanEnv({ HOME: p.home }),
      });
      expect(out.stderr).not.toMatch(/error/i);
      expect(out.code).toBe(0);
      expect(out.stdout).toContain('four');
      const first = server.received[0]!.request!;
      expect(first.model).toBe('reviewer-model');
      expect(first.system).toMatch(/You are the reviewer agent\./);
      expect(first.toolNames).toEqual(['calculate']);
      const flags = await rein(
        [
          'run',
          '--agent',
          'reviewer',
          '--base-url',
          server.url,
          '--no-store',
          '--model',
          'openai/other',
          '--system',
          'Overridden.',
          'again',
        ],
        { cwd: p.project, env: cleanEnv({ HOME: p.home }) },
      );
      expect(flags.code).toBe(0);
      expect(server.received[2]!.request!.model).toBe('other');
      expect(server.received[2]!.request!.system).toMatch(/^Overridden\./);
    } finally {
      await server.close();
    }
    const missing = await rein(['run', '--agent', 'nobody', '--no-store', 'x'], { cwd: p.project, env: cleanEnv({ HOME: p.home }) });
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(
      /there is no agent "nobody": agents are \.rein\/agents\/<name>\.md files .* known here: default, reviewer/,
    );
  });

  it("rein chat --agent talks with the file's agent", async () => {
    const p = await withAgents({ 'reviewer.md': reviewer });
    const server = await startScriptedServer({ script: [text('hello from the reviewer')] });
    try {
      const out = await rein(['chat', '--agent', 'reviewer', '--base-url', server.url, '--no-store'], {
        cwd: p.project,
        env: cleanEnv({ HOME: p.home }),
        stdin: 'hi\n',
      });
      expect(out.code).toBe(0);
      expect(out.stdout + out.stderr).toContain('hello from the reviewer');
      expect(server.received[0]!.request!.system).toMatch(/You are the reviewer agent\./);
    } finally {
      await server.close();
    }
  });
});
