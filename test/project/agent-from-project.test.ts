// An agent built from a project folder, as `rein run` builds it there: the folder's rules,
// skills, settings (permissions) and MCP entries, the workspace tools confined to it, run
// against the scripted model server.
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { defineTool, toolResultText, type ToolResultMessage } from '../../src/index.js';
import { agentFromProject, openProject } from '../../src/project/index.js';
import { startScriptedServer, type ChatRequest, type ScriptedServer } from '../../src/testing/index.js';

let base: string;
let root: string;
let home: string;
const servers: ScriptedServer[] = [];

beforeEach(async () => {
  base = await mkdtemp(join(tmpdir(), 'rein-project-'));
  root = join(base, 'project');
  home = join(base, 'home');
  // `.git` makes the folder a repository root: rules, skills and settings are looked up to here.
  await mkdir(join(root, '.git'), { recursive: true });
  await mkdir(home);
  await writeFile(join(root, 'AGENTS.md'), 'Answer in one line. The build is `make all`.\n');
  await mkdir(join(root, '.rein', 'skills', 'release'), { recursive: true });
  await writeFile(
    join(root, '.rein', 'skills', 'release', 'SKILL.md'),
    '---\nname: release\ndescription: How to cut a release of this project.\n---\nTag, then push the tag.\n',
  );
  await writeFile(join(root, '.rein', 'settings.json'), JSON.stringify({ permissions: { deny: ['write_file'] } }));
  await writeFile(join(root, 'notes.txt'), 'the answer is 42\n');
});

afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
  await rm(base, { recursive: true, force: true });
});

async function scripted(script: Parameters<typeof startScriptedServer>[0]['script']): Promise<ScriptedServer> {
  const server = await startScriptedServer({ script });
  servers.push(server);
  return server;
}

function systemText(request: ChatRequest | undefined): string {
  return (request?.messages ?? [])
    .filter((m) => m.role === 'system')
    .map((m) => (typeof m.content === 'string' ? m.content : JSON.stringify(m.content)))
    .join('\n');
}

function toolNames(request: ChatRequest | undefined): string[] {
  return (request?.tools ?? []).map((t) => t.function.name).sort();
}

describe('agentFromProject', () => {
  it('runs with the folder’s rules, skills, workspace tools and permission settings', async () => {
    const server = await scripted([
      {
        toolCalls: [
          { name: 'read_file', arguments: { path: 'notes.txt' } },
          { name: 'write_file', arguments: { path: 'out.txt', content: 'x' } },
        ],
      },
      { text: 'It is 42.' },
    ]);
    const own = defineTool({
      name: 'ping',
      description: 'Answers pong.',
      parameters: { type: 'object', properties: {} },
      risk: 'read',
      execute: () => 'pong',
    });
    const { agent, project, close } = await agentFromProject(
      { model: server.model(), tools: [own] },
      { root, home, env: { HOME: home }, mcp: false, sandbox: { level: 'off' } },
    );
    try {
      expect(project.root).toBe(root);
      expect(project.notices).toEqual([]);
      expect(project.skills.map((s) => s.name)).toEqual(['release']);
      const result = await agent.run('What is in notes.txt?');
      expect(result.reason).toBe('final_answer');
      expect(result.text).toBe('It is 42.');

      const first = server.requests[0];
      // The agent's own tool beside the workspace tools, the skill tool and the paging tool.
      expect(toolNames(first)).toEqual(
        expect.arrayContaining(['ping', 'read_file', 'write_file', 'edit_file', 'bash', 'glob', 'grep', 'list_dir']),
      );
      expect(systemText(first)).toContain('The build is `make all`.');
      expect(systemText(first)).toContain('How to cut a release of this project.');

      // read_file ran inside the folder; the settings file's deny rule refused write_file.
      const results = result.messages.filter((m) => m.role === 'tool');
      expect(results.map((m) => [m.toolName, m.isError])).toEqual([
        ['read_file', false],
        ['write_file', true],
      ]);
      expect(toolResultText((results[0] as ToolResultMessage).content)).toContain('the answer is 42');
      expect(toolResultText((results[1] as ToolResultMessage).content)).toContain('deny write_file');
      await expect(readFile(join(root, 'out.txt'), 'utf8')).rejects.toThrow();
    } finally {
      await close();
    }
  });

  it('tools: false sends no tool at all, and the rules still reach the model', async () => {
    const server = await scripted([{ text: 'ok' }]);
    const { agent, close } = await agentFromProject({ model: server.model() }, { root, home, env: { HOME: home }, tools: false });
    try {
      expect((await agent.run('hi')).text).toBe('ok');
      expect(toolNames(server.requests[0])).toEqual([]);
      expect(systemText(server.requests[0])).toContain('The build is `make all`.');
    } finally {
      await close();
    }
  });

  it('the options’ own choices win over the project’s', async () => {
    const server = await scripted([
      { toolCalls: [{ name: 'write_file', arguments: { path: 'out.txt', content: 'written' } }] },
      { text: 'done' },
    ]);
    const { agent, close } = await agentFromProject(
      { model: server.model(), approvalPolicy: () => 'allow', context: { rules: 'Rules of the program.' } },
      { root, home, env: { HOME: home }, mcp: false, skills: false },
    );
    try {
      expect((await agent.run('write it')).text).toBe('done');
      expect(await readFile(join(root, 'out.txt'), 'utf8')).toBe('written');
      expect(systemText(server.requests[0])).toContain('Rules of the program.');
      expect(systemText(server.requests[0])).not.toContain('make all');
    } finally {
      await close();
    }
  });
});

describe('openProject', () => {
  it('plan mode offers only the read tools, and reports a broken MCP entry as a notice', async () => {
    await writeFile(join(root, '.mcp.json'), JSON.stringify({ mcpServers: { broken: { command: 42 } } }));
    const project = await openProject({ root, home, env: { HOME: home }, permissions: { mode: 'plan' } });
    try {
      expect(project.policy.mode).toBe('plan');
      const names = (project.options.tools ?? []).map((t) => t.name);
      expect(names).toContain('read_file');
      expect(names).not.toContain('write_file');
      expect(names).not.toContain('bash');
      expect(project.notices.some((n) => n.startsWith('mcp ') && n.includes('broken'))).toBe(true);
    } finally {
      await project.close();
    }
  });

  it('memory keeps notes in the folder, and writing one does not ask', async () => {
    const project = await openProject({ root, home, env: { HOME: home }, mcp: false, memory: true });
    try {
      expect(project.memory).toBeDefined();
      expect(project.options.memory).toBe(project.memory);
      expect(project.policy.toJSON().allow).toEqual(['remember']);
    } finally {
      await project.close();
    }
  });

  it('a network without a sandbox is refused with what to change', async () => {
    await expect(openProject({ root, home, sandbox: { level: 'off', network: true } })).rejects.toThrow(/sandbox\.network needs a sandbox/);
  });
});
