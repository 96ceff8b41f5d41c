import { describe, expect, it } from 'vitest';
import { lockedFileCount, withFileLock } from '../../src/workspace/file-lock.js';

function deferred() {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => (resolve = r));
  return { promise, resolve };
}

describe('withFileLock', () => {
  it('runs holders of one key one at a time, in the order they asked', async () => {
    const order: string[] = [];
    const gate = deferred();
    const first = withFileLock('/f', async () => {
      order.push('first:start');
      await gate.promise;
      order.push('first:end');
      return 1;
    });
    const second = withFileLock('/f', () => {
      order.push('second');
      return 2;
    });
    await Promise.resolve();
    expect(order).toEqual(['first:start']);
    gate.resolve();
    expect(await Promise.all([first, second])).toEqual([1, 2]);
    expect(order).toEqual(['first:start', 'first:end', 'second']);
    expect(lockedFileCount()).toBe(0);
  });

  it('does not serialize different keys', async () => {
    const gate = deferred();
    const slow = withFileLock('/a', () => gate.promise);
    expect(await withFileLock('/b', () => 'free')).toBe('free');
    gate.resolve();
    await slow;
  });

  it('a failing holder releases the lock for the next one', async () => {
    const failing = withFileLock('/c', () => {
      throw new Error('boom');
    });
    const next = withFileLock('/c', () => 'ran');
    await expect(failing).rejects.toThrow('boom');
    expect(await next).toBe('ran');
    expect(lockedFileCount()).toBe(0);
  });
});
