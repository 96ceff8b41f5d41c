/**
 * ONE conformance suite over every recording of every provider (STYLE 10): each response
 * in ../shared/fixtures is replayed by a local HTTP server through the adapter of its wire
 * API, and must keep the contract every consumer relies on, whatever the provider:
 *
 * - the stream is well formed, with exactly one terminal event;
 * - the final message says which API produced it (`api`), which handoff relies on;
 * - usage counts are non-negative integers and the total covers input + output;
 * - tool calls have ids unique within the message and object arguments;
 * - an HTTP error status or an error inside the stream ends in an `error` event whose
 *   error has the `code` and `kind` of the shared table (expected-errors.ts); anything
 *   else ends in `done`.
 *
 * Provider-specific details (texts, ids, quirks) are tested beside each adapter.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { loadAdapter } from '../../src/model/providers/index.js';
import type { AssistantMessage, AssistantStreamEvent } from '../../src/model/types.js';
import { FIXTURES_DIR, startServer } from '../model/fixture-server.js';
import { collect, expectWellFormed } from '../model/stream-helpers.js';
import {
  CLASSIFIED_REPORTS,
  EXPECTED_ERRORS,
  UNREPLAYABLE_REPORTS,
  carriesStreamError,
  reportUrls,
  reportedErrors,
} from './expected-errors.js';
import type { ExpectedError } from './expected-errors.js';
import { allRecordings, apiOf, modelRef, recordedResponse, recordedStatus, replayRecording, typicalModelId } from './recordings.js';

/**
 * Everything wrong with one adapter run, as readable lines (empty when it conforms): one
 * failing case shows all its problems at once, which is what an adapter author needs.
 */
function violations(
  events: AssistantStreamEvent[],
  message: AssistantMessage,
  api: string,
  expected: ExpectedError | undefined,
  status: number,
): string[] {
  const problems: string[] = [];
  try {
    expectWellFormed(events, message);
  } catch (error) {
    problems.push(`stream not well formed: ${error instanceof Error ? error.message.split('\n')[0] : String(error)}`);
  }
  const terminal = events.filter((e) => e.type === 'done' || e.type === 'error');
  if (terminal.length !== 1) problems.push(`expected exactly one terminal event, got ${terminal.length}`);
  if (message.api !== api) problems.push(`message.api is ${JSON.stringify(message.api)}, expected "${api}"`);
  const u = message.usage;
  for (const key of ['input', 'output', 'cacheRead', 'cacheWrite', 'reasoning', 'total'] as const) {
    if (!Number.isInteger(u[key]) || u[key] < 0) problems.push(`usage.${key} is ${u[key]}, expected a non-negative integer`);
  }
  if (u.total < u.input + u.output) problems.push(`usage.total ${u.total} < input ${u.input} + output ${u.output}`);
  const ids = new Set<string>();
  for (const block of message.content) {
    if (block.type !== 'tool_call') continue;
    if (typeof block.id !== 'string' || block.id === '') problems.push(`tool call ${block.name} has no id`);
    else if (ids.has(block.id)) problems.push(`tool call id ${block.id} is used twice in the message`);
    ids.add(block.id);
    if (typeof block.arguments !== 'object' || block.arguments === null || Array.isArray(block.arguments)) {
      problems.push(`tool call ${block.id} arguments are not an object: ${JSON.stringify(block.arguments)}`);
    }
  }
  const last = events[events.length - 1];
  if (expected === undefined) {
    if (last?.type !== 'done')
      problems.push(
        `expected the stream to end in done, it ended in ${last?.type}: ${last?.type === 'error' ? `${last.error.code}: ${last.error.message}` : ''}`,
      );
  } else if (last?.type !== 'error') {
    problems.push(`expected an error event [${expected.join(', ')}], the stream ended in ${last?.type}`);
  } else {
    const got = [last.error.code, last.error.kind];
    if (got[0] !== expected[0] || got[1] !== expected[1])
      problems.push(`error is [${got.join(', ')}], expected [${expected.join(', ')}]: ${last.error.message}`);
    if (status >= 400 && last.error.status !== status)
      problems.push(`error.status is ${last.error.status}, expected the HTTP status ${status}`);
    if (message.stopReason !== 'error') problems.push(`message.stopReason is ${message.stopReason}, expected error`);
    if (message.error?.code !== last.error.code) problems.push(`message.error.code is ${message.error?.code}, expected ${last.error.code}`);
  }
  return problems;
}

const recordings = allRecordings();

describe('the error table', () => {
  it('lists every recording with an error status or an in-stream error, and only those', () => {
    const erroring = recordings.filter((file) => {
      if (recordedStatus(file) >= 400) return true;
      return carriesStreamError(readFileSync(new URL(file, FIXTURES_DIR), 'utf8'));
    });
    expect(Object.keys(EXPECTED_ERRORS).sort()).toEqual(erroring.sort());
  });

  it('classifies every issue report, or says why it cannot be replayed', () => {
    expect([...CLASSIFIED_REPORTS, ...UNREPLAYABLE_REPORTS].sort()).toEqual(reportUrls().sort());
  });
});

for (const api of ['openai-chat', 'openai-responses', 'anthropic-messages', 'gemini'] as const) {
  const files = recordings.filter((file) => apiOf(file) === api);

  describe(`${api} adapter over its recordings`, () => {
    for (const file of files) {
      it(file, async () => {
        const { events, message, requests } = await replayRecording(file);
        expect(requests, 'the adapter sent no request').toHaveLength(1);
        const problems = violations(events, message, api, EXPECTED_ERRORS[file], recordedStatus(file));
        expect(problems, problems.join('; ')).toEqual([]);
      });
    }
  });
}

describe('error payloads from issue reports', () => {
  for (const report of reportedErrors()) {
    it(`${report.api}: ${report.name}`, async () => {
      const server = await startServer([report.response]);
      try {
        const model = modelRef(report.api, typicalModelId(report.api), server.baseUrl);
        const { events, message } = await collect((await loadAdapter(report.api))(model, { messages: [{ role: 'user', content: 'hi' }] }));
        expect(server.requests, 'the adapter sent no request').toHaveLength(1);
        const problems = violations(events, message, report.api, report.expected, report.response.status ?? 200);
        expect(problems, problems.join('; ')).toEqual([]);
      } finally {
        await server.close();
      }
    });
  }
});

describe('recordedResponse', () => {
  it('rebuilds payload-only Responses chunks with their event names, as the server sends them', () => {
    const body = recordedResponse('openai-responses/stream-error-insufficient-quota.chunks.jsonl').body as string;
    expect(body.startsWith('event: response.created\ndata: {"type":"response.created"')).toBe(true);
    expect(body).toMatch(/\nevent: error\ndata: \{"type":"error"/);
  });

  it('keeps Chat and Gemini chunks as bare data frames', () => {
    expect((recordedResponse('gemini/stream-function-call-partial-args.chunks.jsonl').body as string).startsWith('data: {')).toBe(true);
    expect(
      (recordedResponse('openai-compatible/deepseek-stream-reasoning-tool-call.chunks.jsonl').body as string).startsWith('data: {'),
    ).toBe(true);
  });
});
