// A walk reads each ignore file once: the files of its start directory are read by the walk
// itself, never again as rules of the directories above it.
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { walkWorkspace } from '../../src/workspace/walk.js';
import { makeSandbox, type Sandbox } from './helpers.js';

const matchers = vi.hoisted(() => ({ made: 0 }));
vi.mock('ignore', async (importOriginal) => {
  const actual = (await importOriginal<{ default: (...args: unknown[]) => unknown }>()).default;
  return { default: (...args: unknown[]) => (matchers.made++, actual(...args)) };
});

let box: Sandbox;
beforeAll(async () => {
  box = await makeSandbox();
  await box.write({
    '.gitignore': '*.log\n',
    '.git/info/exclude': 'secret.txt\n',
    'a.log': '',
    'secret.txt': '',
    'sub/.gitignore': 'gen.ts\n',
    'sub/gen.ts': '',
    'sub/x.ts': '',
  });
  await mkdir(join(box.root, 'sub', 'deeper'));
});
afterAll(() => box.remove());

async function walk(start: string): Promise<string[]> {
  const seen: string[] = [];
  await walkWorkspace({ root: box.root, start, visit: (entry) => void seen.push(entry.path) });
  return seen;
}

describe('ignore rules of a walk', () => {
  it('from the root: the root .gitignore and .git/info/exclude apply once each', async () => {
    matchers.made = 0;
    expect(await walk('.')).toEqual(['.gitignore', 'sub', 'sub/.gitignore', 'sub/deeper', 'sub/x.ts']);
    expect(matchers.made).toBe(3);
  });

  it('from a subdirectory: the root files apply as ancestors, its own file once', async () => {
    matchers.made = 0;
    expect(await walk('sub')).toEqual(['sub/.gitignore', 'sub/deeper', 'sub/x.ts']);
    expect(matchers.made).toBe(3);
  });
});
