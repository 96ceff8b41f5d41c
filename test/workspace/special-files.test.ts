// Named pipes, sockets and devices in the workspace: the file tools refuse them at once
// (opened non-blocking, the descriptor's type checked before any read), instead of an open
// that blocks a libuv thread until a writer comes — four of those stalled every file
// operation of the process.
import { execFileSync } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, makeSandbox, type Sandbox } from './helpers.js';

let box: Sandbox;
let socket: Server;
beforeAll(async () => {
  box = await makeSandbox();
  await box.write({ 'plain.txt': 'plain\n', 'dir/ok.txt': 'TODO ok\n' });
  execFileSync('mkfifo', [join(box.root, 'pipe'), join(box.root, 'dir/pipe')]);
  socket = createServer();
  await new Promise<void>((resolve) => socket.listen(join(box.root, 'sock'), resolve));
  await box.link('/dev/zero', 'zero');
});
afterAll(async () => {
  await new Promise((resolve) => socket.close(resolve));
  await box.remove();
});

describe('special files', () => {
  it('read_file refuses a named pipe, many times over, and still reads a regular file after', async () => {
    for (let i = 0; i < 6; i++) {
      const r = await call(box.tools().read_file, { path: 'pipe' });
      expect(r.thrown).toMatchObject({ code: 'path_refused' });
      expect(r.text).toContain('pipe is a named pipe (FIFO), not a regular file');
    }
    expect((await call(box.tools().read_file, { path: 'plain.txt' })).text).toContain('plain');
  });

  it('read_file refuses a socket, and a symlink to a device stays refused', async () => {
    expect((await call(box.tools().read_file, { path: 'sock' })).text).toContain('sock is a socket, not a regular file');
    expect((await call(box.tools().read_file, { path: 'zero' })).thrown?.code).toBe('path_refused');
  });

  it('write_file and edit_file refuse a named pipe and leave it a pipe', async () => {
    const w = await call(box.tools().write_file, { path: 'pipe', content: 'x' });
    expect(w.thrown).toMatchObject({ code: 'path_refused' });
    expect(w.text).toContain('named pipe (FIFO)');
    const e = await call(box.tools().edit_file, { path: 'pipe', old_string: 'a', new_string: 'b' });
    expect(e.thrown).toMatchObject({ code: 'path_refused' });
    expect(execFileSync('stat', ['-c', '%F', join(box.root, 'pipe')], { encoding: 'utf8' }).trim()).toBe('fifo');
  });

  it('grep skips pipes in a tree and refuses none of the regular files beside them', async () => {
    expect((await call(box.tools().grep, { pattern: 'TODO', path: 'dir' })).text).toBe('dir/ok.txt:1: TODO ok');
    expect((await call(box.tools().grep, { pattern: 'TODO', path: 'dir/pipe' })).text).toContain('No matches');
    expect(await readFile(join(box.root, 'plain.txt'), 'utf8')).toBe('plain\n');
  });
});
