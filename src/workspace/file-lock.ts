/**
 * Per-file mutual exclusion. Tool calls of one turn may run in parallel, and two edits of
 * one file that both read, change and write back would lose one of the changes; holding
 * this lock around the read-modify-write serializes them, in call order.
 */

/** The tail of each key's queue: resolves when the last holder so far releases. */
const tails = new Map<string, Promise<void>>();

/**
 * Runs `task` once every earlier task holding the same `key` has finished (in the order
 * they asked), and returns its result. Keys are compared as strings: use the real,
 * absolute path of the file so that two spellings of one file share one lock. Held only
 * in this process; the queue of a key is dropped when it empties.
 *
 * @example
 * await withFileLock(target.absolute, async () => {
 *   const text = await readFile(target.absolute, 'utf8');
 *   await writeFile(target.absolute, text.replace('a', 'b'));
 * });
 */
export async function withFileLock<T>(key: string, task: () => T | Promise<T>): Promise<T> {
  const previous = tails.get(key);
  let release!: () => void;
  const held = new Promise<void>((resolve) => (release = resolve));
  // Tails only ever resolve, so one holder's failure never breaks the queue.
  const tail = previous ? previous.then(() => held) : held;
  tails.set(key, tail);
  try {
    if (previous) await previous;
    return await task();
  } finally {
    release();
    if (tails.get(key) === tail) tails.delete(key);
  }
}

/** How many keys have holders or waiters now (for tests and diagnostics). */
export function lockedFileCount(): number {
  return tails.size;
}
