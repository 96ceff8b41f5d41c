// Where the project's `.mcp.json` is found: the nearest one from cwd up to the repository
// root (just cwd outside a repository), with relative paths meaning its own folder.
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { defaultConfigFiles, loadMcpConfig } from '../../src/mcp/config.js';
import { findRepoRoot } from '../../src/util/repo-root.js';
import { tempDir } from './helpers.js';

/** A repository (`base/repo`, with `.git`) and a working directory two levels inside it. */
async function layout(options: { git?: boolean } = {}) {
  const base = await tempDir();
  // The tests below mean "no repository above base"; a temp folder inside one would lie.
  expect(findRepoRoot(base)).toBeUndefined();
  const repo = join(base, 'repo');
  const cwd = join(repo, 'packages', 'app');
  const home = join(base, 'home');
  await mkdir(cwd, { recursive: true });
  await mkdir(home, { recursive: true });
  if (options.git !== false) await mkdir(join(repo, '.git'));
  return { base, repo, cwd, home, userFile: join(home, '.rein', 'mcp.json') };
}

async function mcpJson(dir: string, servers: Record<string, unknown>): Promise<string> {
  const file = join(dir, '.mcp.json');
  await mkdir(dir, { recursive: true });
  await writeFile(file, JSON.stringify({ mcpServers: servers }));
  return file;
}

describe('the project .mcp.json', () => {
  it('is found in the repository root from a nested folder', async () => {
    const { repo, cwd, home, userFile } = await layout();
    const rootFile = await mcpJson(repo, { root: { command: 'root-cmd' } });
    expect(defaultConfigFiles(cwd, home)).toEqual([userFile, rootFile]);
    const config = await loadMcpConfig({ cwd, home });
    // Its servers run in the folder of the file (the project), not in the subfolder.
    expect(config).toEqual({ servers: { root: { command: 'root-cmd', cwd: repo } }, sources: { root: rootFile }, diagnostics: [] });
  });

  it('is the nearest one: a subfolder file wins and the root file is not read at all', async () => {
    const { repo, cwd, home, userFile } = await layout();
    await mcpJson(repo, { shared: { command: 'root-cmd' }, onlyRoot: { command: 'root-only' } });
    const nearFile = await mcpJson(join(repo, 'packages'), { shared: { command: 'near-cmd' } });
    expect(defaultConfigFiles(cwd, home)).toEqual([userFile, nearFile]);
    const config = await loadMcpConfig({ cwd, home });
    expect(config.servers).toEqual({ shared: { command: 'near-cmd', cwd: join(repo, 'packages') } });
    expect(config.sources).toEqual({ shared: nearFile });
  });

  it('a broken nearest file is reported, not passed over for the root one', async () => {
    const { repo, cwd, home } = await layout();
    await mcpJson(repo, { root: { command: 'root-cmd' } });
    const nearFile = join(cwd, '.mcp.json');
    await writeFile(nearFile, '{ "mcpServers": ');
    const config = await loadMcpConfig({ cwd, home });
    expect(config.servers).toEqual({});
    expect(config.diagnostics.map((d) => [d.file, d.severity])).toEqual([[nearFile, 'error']]);
  });

  it('above the repository root is never read', async () => {
    const { base, cwd, home, userFile } = await layout();
    await mcpJson(base, { stranger: { command: 'stranger-cmd' } });
    expect(defaultConfigFiles(cwd, home)).toEqual([userFile, join(cwd, '.mcp.json')]);
    expect(await loadMcpConfig({ cwd, home })).toEqual({ servers: {}, sources: {}, diagnostics: [] });
  });

  it('outside any repository only cwd itself is searched', async () => {
    const { repo, cwd, home } = await layout({ git: false });
    await mcpJson(repo, { parent: { command: 'parent-cmd' } });
    expect(await loadMcpConfig({ cwd, home })).toEqual({ servers: {}, sources: {}, diagnostics: [] });
    const hereFile = await mcpJson(cwd, { here: { command: 'here-cmd' } });
    const config = await loadMcpConfig({ cwd, home });
    expect(config.servers).toEqual({ here: { command: 'here-cmd', cwd } });
    expect(config.sources).toEqual({ here: hereFile });
  });

  it('still comes after the user file and wins on a shared name', async () => {
    const { repo, cwd, home, userFile } = await layout();
    await mkdir(join(home, '.rein'), { recursive: true });
    await writeFile(userFile, JSON.stringify({ mcpServers: { shared: { command: 'user-cmd' }, mine: { command: 'mine-cmd' } } }));
    const rootFile = await mcpJson(repo, { shared: { command: 'project-cmd' } });
    const config = await loadMcpConfig({ cwd, home });
    // The user's servers run where rein runs; the project's in the project's folder.
    expect(config.servers).toEqual({ shared: { command: 'project-cmd', cwd: repo }, mine: { command: 'mine-cmd' } });
    expect(config.sources).toEqual({ shared: rootFile, mine: userFile });
  });

  it("resolves a relative cwd against the declaring file's folder, not the working directory", async () => {
    const { repo, cwd, home } = await layout();
    await mcpJson(repo, { tool: { command: './bin/server', cwd: 'tools' }, here: { command: 'x', cwd: '.' } });
    const config = await loadMcpConfig({ cwd, home });
    expect(config.servers).toEqual({
      tool: { command: './bin/server', cwd: join(repo, 'tools') },
      here: { command: 'x', cwd: repo },
    });
  });

  it('a file named in `files` is read as given: no search, and its servers run where rein runs', async () => {
    const { repo, cwd, home } = await layout();
    await mcpJson(repo, { root: { command: 'root-cmd' } });
    const named = join(cwd, '.mcp.json');
    const config = await loadMcpConfig({ cwd, home, files: [named] });
    expect(config.servers).toEqual({});
    expect(config.diagnostics).toEqual([
      { severity: 'error', file: named, key: '', message: 'does not exist: check the path given for it' },
    ]);
    const rootFile = join(repo, '.mcp.json');
    expect((await loadMcpConfig({ cwd, home, files: [rootFile] })).servers).toEqual({ root: { command: 'root-cmd' } });
  });

  it('servers passed in code run where rein runs', async () => {
    const { repo, cwd, home } = await layout();
    await mcpJson(repo, { root: { command: 'root-cmd' } });
    const config = await loadMcpConfig({ cwd, home, servers: { coded: { command: 'coded-cmd' } } });
    expect(config.servers).toEqual({ root: { command: 'root-cmd', cwd: repo }, coded: { command: 'coded-cmd' } });
  });
});
