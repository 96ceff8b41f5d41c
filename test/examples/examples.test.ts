// The programs of examples/ run offline, as a user runs them (a Node process of its own,
// `rein` and `rein/testing` resolved by name from the built package), each against the
// scripted model server it starts, and print exactly what they are expected to print.
// (`quickstart.ts` is the README's program: test/readme-example.test.ts runs it.)
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { repoRoot, runExample } from './run-example.js';

/** Each example's whole output, line by line. */
const EXPECTED: Record<string, string[]> = {
  'custom-tool.ts': [
    'call: quote {"fruit":"apple","count":"three"}',
    'error (invalid_arguments): invalid arguments for tool "quote": parameter "count" expects an integer, got the string "three". Fix it and call "quote" again.',
    'call: quote {"fruit":"banana","count":3}',
    'error (tool_failed): tool "quote" failed: no price for "banana"; known: apple, pear',
    'call: quote {"fruit":"apple","count":3}',
    'log: quoted {"tool":"quote","toolCallId":"call_3","fruit":"apple","count":3}',
    'result: 3 × apple = €1.50',
    'details: {"unit":0.5,"total":1.5}',
    'answer: Three apples cost €1.50.',
    'final_answer after 4 steps',
  ],
  'streaming-events.ts': [
    ' 0 run_started model=scripted/scripted tools=weather',
    ' 1 state_changed idle → planning',
    ' 2 model_request step=1 attempt=1',
    ' 3 retry_scheduled after overloaded (HTTP 503)',
    ' 4 model_request step=1 attempt=2',
    ' 5 tool_call_delta weather ""',
    ' 5 tool_call_delta "{\\"city\\":\\"O"',
    ' 5 tool_call_delta "slo\\"}"',
    ' 5 assistant_message stopReason=tool_use',
    ' 6 state_changed planning → tool_calling',
    ' 7 tool_started weather {"city":"Oslo"}',
    ' 8 tool_finished weather → snow, -3 °C',
    ' 9 state_changed tool_calling → observing',
    '10 message_injected steer: "And in Rome?"',
    '11 state_changed observing → planning',
    '12 model_request step=2 attempt=1',
    '13 tool_call_delta weather ""',
    '13 tool_call_delta "{\\"city\\":\\"R"',
    '13 tool_call_delta "ome\\"}"',
    '13 assistant_message stopReason=tool_use',
    '14 state_changed planning → tool_calling',
    '15 tool_started weather {"city":"Rome"}',
    '16 tool_finished weather → sun, 18 °C',
    '17 state_changed tool_calling → observing',
    '18 state_changed observing → planning',
    '19 model_request step=3 attempt=1',
    '20 text_delta "Oslo: snow"',
    '20 text_delta ", -3 °C. R"',
    '20 text_delta "ome: sun, "',
    '20 text_delta "18 °C."',
    '20 assistant_message stopReason=stop',
    '21 state_changed planning → done',
    '22 run_finished done (final_answer)',
    'answer: Oslo: snow, -3 °C. Rome: sun, 18 °C.',
  ],
  'durable-run.ts': [
    'first: aborted after 1 tool call',
    'stored: aborted',
    'resumed from: aborted',
    'ran: send_invite',
    'second: done (final_answer): The Lovelace room is booked for Tuesday and the team is invited.',
    'bookings made: 1',
    'log: 23 events, 2 tool results, stored: done',
  ],
  'approvals.ts': [
    'policy: balance → allow (default: risk read allows)',
    'balance: €1,200.00',
    'policy: transfer → ask (default: risk write asks)',
    'policy: transfer → ask (default: risk write asks)',
    'policy: close_account → deny (deny close_account)',
    'asked: transfer {"to":"Ann","euros":40}',
    'person: approved',
    'transfer: sent €40.00 to Ann',
    'asked: transfer {"to":"Bob","euros":900}',
    'person: declined: €900 is over the €100 limit for transfers without a second signature',
    'transfer: refused: permission denied for tool "transfer": a person declined it: €900 is over the €100 limit for transfers without a second signature',
    'close_account: refused: permission denied for tool "close_account": the rule "deny close_account" refuses this call; do it another way or ask the user',
    'answer: Sent €40 to Ann. The €900 to Bob was declined, and closing the account is not allowed.',
  ],
  'approve-later.ts': [
    'waiting: deploy {"version":"2.4.1"}',
    'first: paused (awaiting_approval)',
    'paused runs: this one',
    'ran: deploy → version 2.4.1 is live',
    'second: done (final_answer): Version 2.4.1 is deployed.',
    'logged: approved=true (release window open), arguments hash kept',
  ],
  'structured-output.ts': [
    'steer: "Give your answer by calling the `final_answer` tool with arguments that match its parameters schema: a text answer does not finish this task."',
    'refused: invalid arguments for tool "final_answer": parameter "population" expects an integer, got the string "about two million". Fix it and call "final_answer" again.',
    'done: done_signal after 3 steps',
    'Paris, France: 2,102,650 people; see Louvre and Eiffel Tower',
  ],
  'mcp-tools.ts': [
    'server memory: connected, 9 tools',
    'memory__create_entities: risk write',
    'memory__search_nodes: risk read',
    'create_entities: Ada (prefers tea)',
    'search_nodes: Ada (prefers tea)',
    'final_answer: Ada prefers tea.',
  ],
};

/** Tested elsewhere: the README shows it and its output, and test/readme-example.test.ts holds both to it. */
const TESTED_WITH_THE_README = ['quickstart.ts'];

describe('examples/', () => {
  it('has an expected output for every program', () => {
    const programs = readdirSync(join(repoRoot, 'examples')).filter((name) => name.endsWith('.ts'));
    expect(programs.sort()).toEqual([...Object.keys(EXPECTED), ...TESTED_WITH_THE_README].sort());
  });

  for (const [file, lines] of Object.entries(EXPECTED)) {
    it(`${file} runs offline and prints what it should`, async () => {
      const run = await runExample(file);
      expect(run.stderr).toBe('');
      expect(run.stdout.split('\n')).toEqual([...lines, '']);
      expect(run.code).toBe(0);
      // A Node process (and for MCP an npx) per example: generous on a busy machine.
    }, 120_000);
  }
});
