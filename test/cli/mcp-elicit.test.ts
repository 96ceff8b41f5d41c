// The terminal's answer to a server's elicitation (what `rein mcp call` asks at a
// terminal), against the client-features server over stdio: questions per field with
// defaults, a re-ask when a value does not fit, decline and cancel, URL mode.
import { PassThrough } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { terminalElicit } from '../../src/cli/mcp-elicit.js';
import type { CliIO } from '../../src/cli/io.js';
import { host, textOf } from '../mcp/helpers.js';

const FEATURES = fileURLToPath(new URL('../mcp/fixtures/client-features-server.mjs', import.meta.url));

function terminal(): { io: CliIO; shown: () => string } {
  const stderr = new PassThrough();
  let text = '';
  stderr.on('data', (d: Buffer) => (text += d.toString()));
  const io = {
    stdout: new PassThrough(),
    stderr,
    stdin: new PassThrough(),
    env: {},
    signal: new AbortController().signal,
  } as unknown as CliIO;
  return { io, shown: () => text };
}

describe('elicitation at the terminal', () => {
  it('asks each field, takes defaults for empty lines, re-asks a value that does not fit', async () => {
    // First round: no name and a bad age (re-asked); second round: good values.
    const answers = ['', 'x', '', '', 'Ada', '41', 'red', ''];
    const { io, shown } = terminal();
    const questions: string[] = [];
    const mcp = await host(
      { f: { command: process.execPath, args: [FEATURES] } },
      { elicit: terminalElicit(io, async (q) => (questions.push(q), answers.shift() ?? '')) },
    );
    const result = JSON.parse(textOf((await mcp.callTool('f', 'ask', {})).content)) as unknown;
    expect(result).toEqual({ action: 'accept', content: { name: 'Ada', age: 41, colour: 'red', subscribe: false } });
    expect(questions.slice(0, 4)).toEqual([
      '  Name (string): ',
      '  age (integer) [30]: ',
      '  colour (red / green) [green]: ',
      '  subscribe (boolean) [false]: ',
    ]);
    expect(shown()).toContain('MCP server "f" asks: Who are you?');
    expect(shown()).toMatch(/That does not fit: .*name/);
  });

  it('decline and cancel typed at a question answer that; URL mode shows the URL', async () => {
    const answers = ['decline', 'y'];
    const { io, shown } = terminal();
    const mcp = await host(
      { f: { command: process.execPath, args: [FEATURES] } },
      { elicit: terminalElicit(io, async () => answers.shift() ?? 'cancel') },
    );
    expect(JSON.parse(textOf((await mcp.callTool('f', 'ask', {})).content))).toEqual({ action: 'decline' });
    expect(JSON.parse(textOf((await mcp.callTool('f', 'ask_url', {})).content))).toEqual({ action: 'accept' });
    expect(shown()).toContain('open: https://example.com/link?session=1');
    expect(JSON.parse(textOf((await mcp.callTool('f', 'ask', {})).content))).toEqual({ action: 'cancel' });
  });
});

describe("a server's question at the terminal", () => {
  it('shows control sequences in the message, URL, titles and allowed values as symbols, not obeyed', async () => {
    const { io, shown } = terminal();
    const questions: string[] = [];
    const elicit = terminalElicit(io, async (q) => (questions.push(q), 'red'));
    const answer = await elicit({
      server: 'evil',
      mode: 'form',
      message: 'Pick\x1b[2J\x1b]0;title\x07',
      signal: new AbortController().signal,
      requestedSchema: {
        type: 'object',
        properties: { color: { type: 'string', title: 'Col\x1b[31mour', enum: ['red', 'b\x1b[1mlue'] } },
        required: ['color'],
      },
    });
    expect(answer.action).toBe('accept');
    expect(shown()).toContain('MCP server "evil" asks: Pick␛[2J␛]0;title␇');
    expect(questions[0]).toBe('  Col␛[31mour (red / b␛[1mlue): ');
    expect(shown() + questions.join('')).not.toContain('\x1b');

    const url = terminal();
    await terminalElicit(
      url.io,
      async () => 'y',
    )({
      server: 'evil',
      mode: 'url',
      message: 'Open',
      url: 'https://example.com/\x1b]8;;x\x07',
      signal: new AbortController().signal,
    });
    expect(url.shown()).toContain('open: https://example.com/␛]8;;x␇');
  });
});
