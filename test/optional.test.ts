// The optional packages (package.json's optional peer dependencies), as a user without them
// meets them: rein installed in a folder where none of them is (test/without-packages.ts),
// run in a fresh Node process. The library works; each piece that needs a missing package
// fails at once with a message that names it (`npm install …`), never "Cannot find module".
import { execFile } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { nodeHasSqlite } from './store/sqlite-drivers.js';
import { installWithout, type Install } from './without-packages.js';

const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as {
  dependencies: Record<string, string>;
  devDependencies: Record<string, string>;
  peerDependencies: Record<string, string>;
  peerDependenciesMeta: Record<string, { optional?: boolean }>;
};
const optional = Object.keys(pkg.peerDependencies);

let install: Install;
beforeAll(() => {
  install = installWithout(optional);
});
afterAll(() => install?.remove());

interface Outcome {
  code: number;
  stdout: string;
  stderr: string;
}

const run = promisify(execFile);

/** Runs `args` with this Node in the install's folder (no NODE_PATH, so nothing is found outside it). */
async function node(args: string[], env: Record<string, string> = {}): Promise<Outcome> {
  const base = { ...process.env, ...env };
  delete base.NODE_PATH;
  delete base.REIN_SQLITE_DRIVER;
  delete base.REIN_DATABASE_URL;
  delete base.OPENAI_API_KEY;
  try {
    const { stdout, stderr } = await run(process.execPath, args, { cwd: install.dir, env: base, timeout: 60_000 });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const e = error as { code?: unknown; stdout?: string; stderr?: string };
    if (typeof e.code !== 'number') throw error;
    return { code: e.code, stdout: e.stdout ?? '', stderr: e.stderr ?? '' };
  }
}

/** Runs an ES module snippet in the install's folder; its last line of stdout is JSON. */
async function script(code: string, env: Record<string, string> = {}): Promise<unknown> {
  const file = join(install.dir, `snippet-${Math.random().toString(36).slice(2)}.mjs`);
  writeFileSync(file, code);
  const out = await node([file], env);
  expect(out.code, out.stderr).toBe(0);
  return JSON.parse(out.stdout.trim().split('\n').at(-1)!);
}

const cli = (args: string[], env: Record<string, string> = {}): Promise<Outcome> => node([join(install.rein, 'bin/rein.js'), ...args], env);

/** A snippet that runs `body` and prints `{ message, code }` of what it threw (or `{ ok: value }`). */
const attempt = (imports: string, body: string): string => `${imports}
try {
  const value = await (async () => { ${body} })();
  console.log(JSON.stringify({ ok: value ?? null }));
} catch (error) {
  console.log(JSON.stringify({ message: String(error?.message), code: error?.code, missing: error?.details?.missingPackages }));
}`;

describe('optional packages', () => {
  it('are optional peer dependencies, and a development install has each of them', () => {
    expect(optional.length).toBeGreaterThanOrEqual(6);
    for (const name of optional) {
      expect(pkg.peerDependenciesMeta[name]?.optional, `${name} is optional`).toBe(true);
      expect(pkg.devDependencies[name], `${name} is a dev dependency`).toMatch(/^\d+\.\d+\.\d+$/);
      expect(pkg.dependencies[name], `${name} is not a dependency`).toBeUndefined();
    }
    // Each optional package has a case below.
    const covered = new Set(['better-sqlite3', 'pg', 'pg-boss', '@modelcontextprotocol/sdk', 'gpt-tokenizer', 'hono', '@hono/node-server']);
    expect(optional.filter((name) => !covered.has(name) && !name.startsWith('@opentelemetry/'))).toEqual([]);
  });

  it('the library runs an agent with tools without any of them', async () => {
    const out = await script(`
      import { Agent, defineTool, jsonSchema } from 'rein';
      import { startScriptedServer } from 'rein/testing';
      const add = defineTool({ name: 'add', description: 'adds', parameters: jsonSchema({ type: 'object', properties: { a: { type: 'integer' }, b: { type: 'integer' } }, required: ['a', 'b'] }), execute: ({ a, b }) => String(a + b) });
      const server = await startScriptedServer({ script: [{ toolCalls: [{ name: 'add', arguments: { a: 2, b: 3 } }] }, { text: 'five' }] });
      try {
        const result = await new Agent({ model: server.model(), tools: [add] }).run('2 + 3?');
        console.log(JSON.stringify({ status: result.status, text: result.text }));
      } finally {
        await server.close();
      }
    `);
    expect(out).toEqual({ status: 'done', text: 'five' });
  });

  it(
    nodeHasSqlite
      ? 'without better-sqlite3 the SQLite store runs on node:sqlite'
      : 'without better-sqlite3 (and no node:sqlite in this Node) the SQLite store names the package',
    async () => {
      const out = (await script(
        attempt(
          `import { openStore } from 'rein/store';`,
          `
      const store = await openStore('runs.db');
      await store.createRun({ id: 'r1', model: 'm', configHash: 'h' });
      const found = (await store.getRun('r1'))?.id;
      const driver = store.driver;
      await store.close();
      return { found, driver };
    `,
        ),
      )) as Record<string, unknown>;
      if (nodeHasSqlite) expect(out).toEqual({ ok: { found: 'r1', driver: 'node:sqlite' } });
      else {
        expect(out.message).toContain('npm install better-sqlite3');
        expect(out).toMatchObject({ code: 'config', missing: ['better-sqlite3'] });
      }
    },
  );

  it(
    nodeHasSqlite ? 'without better-sqlite3 the memory runs on node:sqlite' : 'without better-sqlite3 the memory names the package',
    async () => {
      const out = (await script(
        attempt(
          `import { openMemory } from 'rein/memory';`,
          `
      const memory = await openMemory({ path: 'memory.db', project: 'p' });
      memory.remember('the deploy needs a VPN');
      const hits = memory.search('deploys', 1).map((hit) => hit.text);
      memory.close();
      return hits;
    `,
        ),
      )) as Record<string, unknown>;
      if (nodeHasSqlite) expect(out).toEqual({ ok: ['the deploy needs a VPN'] });
      else
        expect(out).toMatchObject({
          code: 'config',
          missing: ['better-sqlite3'],
          message: expect.stringContaining('npm install better-sqlite3'),
        });
    },
  );

  it('asked for better-sqlite3 by name, a store without it names the package', async () => {
    const out = await script(
      attempt(
        `import { openSqliteStore } from 'rein/store';`,
        `return (await openSqliteStore({ path: 'named.db', driver: 'better-sqlite3' })).driver;`,
      ),
    );
    expect(out).toMatchObject({
      code: 'config',
      missing: ['better-sqlite3'],
      message: expect.stringContaining('npm install better-sqlite3'),
    });
  });

  it('the Postgres store without pg names the package', async () => {
    const out = await script(attempt(`import { openStore } from 'rein/store';`, `return await openStore('postgres://127.0.0.1:1/none');`));
    expect(out).toMatchObject({ code: 'config', missing: ['pg'], message: expect.stringContaining('npm install pg') });
  });

  it('submitting a run (and rein worker) without pg-boss names the package, with pg installed', async () => {
    const url = process.env.REIN_TEST_DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/test';
    const schema = `rein_opt_${process.pid}`;
    const withPg = installWithout(['pg-boss']);
    try {
      const file = join(withPg.dir, 'submit.mjs');
      writeFileSync(
        file,
        attempt(
          `import { Agent } from 'rein'; import { openPostgresStore } from 'rein/store';`,
          `
          const store = await openPostgresStore({ url: ${JSON.stringify(url)}, schema: ${JSON.stringify(schema)} });
          try {
            return await new Agent({ model: 'openai/scripted', modelConfig: { keyOptional: true }, store }).submit('hi');
          } finally {
            await store.close();
          }
        `,
        ),
      );
      const base = { ...process.env };
      delete base.NODE_PATH;
      const { stdout } = await run(process.execPath, [file], { cwd: withPg.dir, env: base, timeout: 60_000 });
      expect(JSON.parse(stdout.trim().split('\n').at(-1)!)).toMatchObject({
        code: 'config',
        missing: ['pg-boss'],
        message: expect.stringContaining('npm install pg-boss'),
      });
      const worker = await run(process.execPath, [join(withPg.rein, 'bin/rein.js'), 'worker', '--store', url], {
        cwd: withPg.dir,
        env: base,
        timeout: 60_000,
      }).then(
        () => ({ code: 0, stderr: '' }),
        (error: { code?: number; stderr?: string }) => ({ code: error.code, stderr: error.stderr ?? '' }),
      );
      expect(worker.code).toBe(2);
      expect(worker.stderr).toContain('npm install pg-boss');
      expect(worker.stderr).not.toMatch(/Cannot find (module|package)/);
    } finally {
      withPg.remove();
      const { default: pg } = await import('pg');
      const admin = new pg.Client({ connectionString: url });
      await admin.connect();
      await admin.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
      await admin.end();
    }
  });

  it('an MCP server without the MCP SDK names the package, in the library and in rein mcp', async () => {
    const out = await script(
      attempt(
        `import { startMcp } from 'rein/mcp';`,
        `
      const host = await startMcp({ servers: { local: { command: process.execPath, args: ['-e', ''] } } });
      await host.close();
    `,
      ),
    );
    expect(out).toMatchObject({
      code: 'config',
      missing: ['@modelcontextprotocol/sdk'],
      message: expect.stringContaining('npm install @modelcontextprotocol/sdk'),
    });
    writeFileSync(
      join(install.dir, '.mcp.json'),
      JSON.stringify({ mcpServers: { local: { command: process.execPath, args: ['-e', ''] } } }),
    );
    const listed = await cli(['mcp', 'list']);
    expect(listed.code).not.toBe(0);
    expect(listed.stderr + listed.stdout).toContain('npm install @modelcontextprotocol/sdk');
    expect(listed.stderr + listed.stdout).not.toMatch(/Cannot find (module|package)/);
  });

  it('rein serve without hono names the packages', async () => {
    const out = await cli(['serve', '--port', '0']);
    expect(out.code).not.toBe(0);
    expect(out.stderr).toContain('npm install hono @hono/node-server');
    expect(out.stderr).not.toMatch(/Cannot find (module|package)/);
  });

  it('without gpt-tokenizer an OpenAI model is counted with the estimate', async () => {
    const out = await script(`
      import { createTokenCounter, estimateTokens } from 'rein';
      const counter = createTokenCounter({ provider: 'openai', id: 'gpt-4o', api: 'openai-chat' });
      await counter.load();
      const text = 'The quick brown fox jumps over the lazy dog.';
      console.log(JSON.stringify({ method: counter.method, same: counter.text(text) === estimateTokens(text) }));
    `);
    expect(out).toEqual({ method: 'estimate', same: true });
  });

  it('OTLP export without the OpenTelemetry packages names them', async () => {
    const out = await cli(['run', '--no-store', '--model', 'openai/gpt-4o', 'hi'], {
      OPENAI_API_KEY: 'x',
      OPENAI_BASE_URL: 'http://127.0.0.1:1/v1',
      OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:1',
    });
    expect(out.code).not.toBe(0);
    expect(out.stderr).toMatch(/npm install @opentelemetry\/api @opentelemetry\/resources @opentelemetry\/sdk-trace-base/);
  });
});
