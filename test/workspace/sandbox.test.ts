// The shell's sandbox, through the real bash tool: what a command the policy allowed can
// still not do. Needs bubblewrap (.ci/run installs it).
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sandboxArgs, sandboxRefusal, sandboxUnavailable, parseSandboxLevel, findBwrap } from '../../src/workspace/sandbox.js';
import { call, makeSandbox, type Sandbox } from './helpers.js';

let box: Sandbox;
/** A home outside /tmp and /var/tmp (which the sandbox replaces anyway), holding a key the shell must not read. */
let home: string;
beforeAll(async () => {
  box = await makeSandbox();
  mkdirSync(join(process.cwd(), 'node_modules', '.cache'), { recursive: true });
  home = mkdtempSync(join(process.cwd(), 'node_modules', '.cache', 'rein-home-'));
  expect(existsSync(home)).toBe(true);
  mkdirSync(join(home, '.ssh'));
  writeFileSync(join(home, '.ssh', 'id_test'), 'PRIVATE KEY\n');
  mkdirSync(join(home, '.rein'));
  writeFileSync(join(home, '.rein', 'settings.json'), '{}');
});
afterAll(async () => {
  await box.remove();
  rmSync(home, { recursive: true, force: true });
});

const sandboxed = (extra: Record<string, unknown> = {}) =>
  box.tools({ bash: { sandbox: { level: 'workspace-write', home, ...extra }, timeoutMs: 30_000 } }).bash!;
const run = (command: string, extra?: Record<string, unknown>) => call(sandboxed(extra), { command });

describe('bash in the sandbox', { timeout: 60_000 }, () => {
  it('bubblewrap is there (the CI installs it)', async () => {
    expect(findBwrap()).toBeDefined();
    expect(await sandboxUnavailable()).toBeUndefined();
  });

  it('a write in the workspace succeeds', async () => {
    const r = await run('echo made > made.txt && cat made.txt');
    expect(r.isError).toBe(false);
    expect(readFileSync(join(box.root, 'made.txt'), 'utf8')).toBe('made\n');
  });

  it('a write outside the workspace fails and leaves nothing on the host', async () => {
    const target = join(home, 'planted.txt');
    const r = await run(
      `echo x > ${target}; echo x > /var/tmp/rein-planted-$$; echo x > ${join(box.outside, 'planted.txt')}; echo x > /usr/rein-planted; echo done`,
    );
    expect(r.text).toContain('done');
    expect(existsSync(target)).toBe(false);
    expect(existsSync(join(box.outside, 'planted.txt'))).toBe(false);
    expect(existsSync('/usr/rein-planted')).toBe(false);
    expect(spawnSync('sh', ['-c', 'ls /var/tmp | grep rein-planted'], { encoding: 'utf8' }).stdout).toBe('');
  });

  it('/tmp is private: written inside, gone outside', async () => {
    const r = await run('echo inside > /tmp/rein-private-probe && cat /tmp/rein-private-probe');
    expect(r.text).toContain('inside');
    expect(existsSync('/tmp/rein-private-probe')).toBe(false);
  });

  it("the home's secrets are not there: cat ~/.ssh/<file> fails, and rein's own folder is not visible", async () => {
    const r = await run(
      `cat ${join(home, '.ssh', 'id_test')}; echo "entries: $(ls -A ${home} | wc -l)"; cat ${join(home, '.rein', 'settings.json')}`,
    );
    expect(r.text).not.toContain('PRIVATE KEY');
    expect(r.text).toMatch(/No such file or directory/);
    expect(r.text).toContain('entries: 0');
    // Unconfined, the same command reads the key: the test's home is a real one.
    expect((await call(box.tools({ bash: { sandbox: 'off' } }).bash!, { command: `cat ${join(home, '.ssh', 'id_test')}` })).text).toContain(
      'PRIVATE KEY',
    );
  });

  describe('network', () => {
    let server: Server;
    let port: number;
    let connections = 0;
    const sockets: import('node:net').Socket[] = [];
    beforeAll(async () => {
      server = createServer((socket) => {
        connections++;
        sockets.push(socket);
        socket.on('error', () => undefined);
        socket.end();
      });
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      port = (server.address() as { port: number }).port;
    });
    afterAll(async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    });

    it('a connection to a listener on 127.0.0.1 fails without network', async () => {
      const before = connections;
      const r = await run(`(echo hi > /dev/tcp/127.0.0.1/${port}) 2>&1 && echo connected || echo refused`);
      expect(r.text).toContain('refused');
      expect(connections).toBe(before);
    });

    it('with network allowed it connects', async () => {
      const before = connections;
      const r = await run(`(echo hi > /dev/tcp/127.0.0.1/${port}) 2>&1 && echo connected || echo refused`, { network: true });
      expect(r.text).toContain('connected');
      expect(connections).toBe(before + 1);
    });
  });

  it('ps shows no host process', async () => {
    const r = await run('ps -eo pid,args');
    const lines = r.text.split('\n').filter((l) => /^\s*\d+\s/.test(l));
    expect(lines.length).toBeLessThanOrEqual(4);
    expect(r.text).not.toContain(String(process.pid));
    expect(r.text).not.toMatch(/vitest|node /);
  });

  it('`sleep 1000 &` is gone when the call ends', async () => {
    const marker = `1000.${process.pid}${Date.now() % 1000}`;
    const r = await run(`sleep ${marker} & echo started`);
    expect(r.text).toContain('started');
    const left = spawnSync('ps', ['-eo', 'args'], { encoding: 'utf8' })
      .stdout.split('\n')
      .filter((l) => l.includes(`sleep ${marker}`));
    expect(left).toEqual([]);
  });

  it("rein's configuration in the workspace is read-only to the shell", async () => {
    await box.write({ '.rein/settings.json': '{}', '.mcp.json': '{}' });
    const r = await run(
      'echo \'{"permissions":{"allow":["bash"]}}\' > .rein/settings.json; echo x > .mcp.json; echo x > .rein/new.json; echo done',
    );
    expect(r.text).toContain('done');
    expect(readFileSync(join(box.root, '.rein', 'settings.json'), 'utf8')).toBe('{}');
    expect(readFileSync(join(box.root, '.mcp.json'), 'utf8')).toBe('{}');
    expect(existsSync(join(box.root, '.rein', 'new.json'))).toBe(false);
  });

  it('read-only: the workspace cannot be written either', async () => {
    const r = await run('echo x > ro.txt; echo done', { level: 'read-only' });
    expect(r.text).toContain('done');
    expect(existsSync(join(box.root, 'ro.txt'))).toBe(false);
  });

  it('without bubblewrap every command is refused, saying why and how to go on', async () => {
    const tool = box.tools({ bash: { sandbox: { bwrap: join(box.base, 'no-bwrap') } } }).bash!;
    const r = await call(tool, { command: 'echo x > refused.txt' });
    expect(r.thrown?.code).toBe('tool_failed');
    expect(r.text).toMatch(/commands run in a sandbox, and bubblewrap cannot start a sandbox here/);
    expect(r.text).toMatch(/--sandbox off/);
    expect(existsSync(join(box.root, 'refused.txt'))).toBe(false);
    expect(sandboxRefusal('bubblewrap (bwrap) is not installed').message).toMatch(/apt-get install bubblewrap|Install bubblewrap/);
  });

  it('off runs unconfined', async () => {
    const r = await call(box.tools({ bash: { sandbox: 'off' } }).bash!, { command: `cat ${join(box.outside, 'secret.txt')}` });
    expect(r.text).toContain('top secret');
  });

  it('levels are read strictly; the mounts put the workspace over the empty home and /tmp', () => {
    expect(() => parseSandboxLevel('full')).toThrow(/unknown sandbox level "full": use one of read-only, workspace-write, off/);
    const args = sandboxArgs('/home/u/project', { level: 'workspace-write', home: '/home/u' });
    expect(args.indexOf('--bind')).toBeGreaterThan(args.indexOf('/home/u'));
    expect(args).toContain('--unshare-all');
    expect(args).not.toContain('--share-net');
  });
});
