// Tab at `rein chat`'s prompt completes `/server:prompt args` lines through the server's
// `completion/complete`: a real readline at a (fake) terminal, a real MCP server of our own.
import { createInterface } from 'node:readline';
import { PassThrough } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { promptCompleter } from '../../src/cli/prompt-completer.js';
import { host } from '../mcp/helpers.js';

const FEATURES = fileURLToPath(new URL('../mcp/fixtures/client-features-server.mjs', import.meta.url));

/** A readline at a terminal over streams, and the text it has drawn so far. */
function terminal(completer: ReturnType<typeof promptCompleter>) {
  const input = new PassThrough();
  const output = new PassThrough();
  let drawn = '';
  const waiters: Array<() => void> = [];
  output.setEncoding('utf8').on('data', (d: string) => {
    drawn += d;
    for (const wake of waiters.splice(0)) wake();
  });
  const rl = createInterface({ input, output, terminal: true, completer });
  return {
    type: (text: string) => input.write(text),
    async drawnIncludes(text: string): Promise<void> {
      while (!drawn.includes(text)) await new Promise<void>((resolve) => waiters.push(resolve));
    },
    nextLine: () => new Promise<string>((resolve) => rl.once('line', resolve)),
    close: () => rl.close(),
  };
}

describe('completing /server:prompt arguments at the chat prompt', () => {
  it('Tab completes the server, the prompt and an argument value the server offers', async () => {
    const mcp = await host({ f: { command: process.execPath, args: [FEATURES] } });
    const t = terminal(promptCompleter(mcp));
    try {
      t.type('/f:gr\t');
      await t.drawnIncludes('/f:greet ');
      t.type('title=P\t');
      await t.drawnIncludes('title=Prof');
      t.type(' name=A\t');
      await t.drawnIncludes('name=Alan');
      const line = t.nextLine();
      t.type('\r');
      // With title=Prof given, the server narrowed the names to Alan.
      expect(await line).toBe('/f:greet title=Prof name=Alan');
    } finally {
      t.close();
    }
  });

  it('a line that is not a prompt command, or one no server completes, stays as typed', async () => {
    const mcp = await host({ f: { command: process.execPath, args: [FEATURES] } });
    // Each completion's answer, awaited (nothing is drawn when it changes nothing).
    let answered: () => void = () => undefined;
    const complete = promptCompleter(mcp);
    const t = terminal((line, callback) =>
      complete(line, (error, result) => {
        callback(error, result);
        answered();
      }),
    );
    try {
      const first = t.nextLine();
      // A Tab alone in its chunk (within one chunk readline takes keys as pasted, without completion).
      const asked = new Promise<void>((resolve) => (answered = resolve));
      t.type('hello');
      t.type('\t');
      await asked;
      t.type(' there\r');
      expect(await first).toBe('hello there');
      const second = t.nextLine();
      const done = new Promise<void>((resolve) => (answered = resolve));
      t.type('/nope:x');
      t.type('\t');
      await done;
      t.type('\r');
      expect(await second).toBe('/nope:x');
    } finally {
      t.close();
    }
  });
});
