/**
 * The request checkers of the handoff matrix catch what the APIs reject: each rule is
 * shown failing on a body that breaks it, so a green matrix means something.
 */
import { describe, expect, it } from 'vitest';
import { emptyUsage } from '../../src/model/types.js';
import type { AssistantMessage } from '../../src/model/types.js';
import { checkRequest } from './wire-rules.js';
import type { HandoffCase } from './wire-rules.js';

const source: AssistantMessage = {
  role: 'assistant',
  content: [
    { type: 'thinking', thinking: 'plan', signature: 'SIG-THINK' },
    { type: 'tool_call', id: 'call_1', name: 'f', arguments: {}, rawArguments: '{}', signature: 'SIG-CALL' },
  ],
  stopReason: 'tool_use',
  usage: emptyUsage(),
  provider: 'x',
  model: 'x',
};
const foreign: HandoffCase = { source, own: false, targetId: 'm' };

describe('wire rules', () => {
  it('Chat Completions: unanswered calls, orphan results, long ids, non-object arguments, bad roles, foreign signatures', () => {
    const body = {
      messages: [
        { role: 'user', content: 'q' },
        {
          role: 'assistant',
          content: null,
          tool_calls: [{ id: 'x'.repeat(41), type: 'function', function: { name: 'f', arguments: '[1]' } }],
        },
        { role: 'tool', tool_call_id: 'other', content: 'SIG-CALL' },
        { role: 'function', content: '' },
      ],
    };
    const problems = checkRequest('openai-chat', body, foreign).join('\n');
    expect(problems).toMatch(/1 to 40 characters/);
    expect(problems).toMatch(/arguments must be the text of a JSON object/);
    expect(problems).toMatch(/answers tool call "other"/);
    expect(problems).toMatch(/"function" is not a Chat Completions role/);
    expect(problems).toMatch(/foreign signature was sent: SIG-CALL/);
    expect(
      checkRequest(
        'openai-chat',
        {
          messages: [
            {
              role: 'assistant',
              content: null,
              tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'f', arguments: '{}' } }],
            },
            { role: 'user', content: 'next' },
          ],
        },
        foreign,
      ).join('\n'),
    ).toMatch(/not answered before messages\[1\]/);
  });

  it('Responses: fc ids, reasoning items of another model, function calls sent by id without their reasoning, unanswered calls', () => {
    const body = {
      input: [
        { role: 'user', content: 'q' },
        { type: 'reasoning', id: 'rs_1', encrypted_content: 'x', summary: [] },
        { type: 'function_call', call_id: 'call_1', name: 'f', arguments: '{}', id: 'call_1' },
        { type: 'function_call', call_id: 'call_2', name: 'f', arguments: '{}' },
        { type: 'function_call_output', call_id: 'call_1', output: 'r' },
        { type: 'function_call_output', call_id: 'call_9', output: 'r' },
      ],
    };
    const problems = checkRequest('openai-responses', body, foreign).join('\n');
    expect(problems).toMatch(/must begin with "fc"/);
    expect(problems).toMatch(/reasoning item, but the target did not write/);
    expect(problems).toMatch(/call_2 is never answered/);
    expect(problems).toMatch(/answers call "call_9"/);
    const own: HandoffCase = { source, own: true, targetId: 'm' };
    const byIdWithoutReasoning = {
      input: [
        { type: 'function_call', call_id: 'c', name: 'f', arguments: '{}', id: 'fc_1' },
        { type: 'function_call_output', call_id: 'c', output: 'r' },
      ],
    };
    expect(checkRequest('openai-responses', byIdWithoutReasoning, own).join('\n')).toMatch(/without the reasoning item/);
  });

  it('Anthropic: id pattern, results in the next user message and first, foreign or unsigned thinking', () => {
    const body = {
      messages: [
        { role: 'user', content: [{ type: 'text', text: 'q' }] },
        {
          role: 'assistant',
          content: [
            { type: 'thinking', thinking: 'plan' },
            { type: 'tool_use', id: 'call.1', name: 'f', input: {} },
            { type: 'tool_use', id: 'toolu_2', name: 'f', input: [] },
          ],
        },
        {
          role: 'user',
          content: [
            { type: 'text', text: 'before' },
            { type: 'tool_result', tool_use_id: 'toolu_2' },
          ],
        },
        { role: 'system', content: 'x' },
      ],
    };
    const problems = checkRequest('anthropic-messages', body, foreign).join('\n');
    expect(problems).toMatch(/must match \^\[a-zA-Z0-9_-\]\{1,64\}\$/);
    expect(problems).toMatch(/input must be an object/);
    expect(problems).toMatch(/tool results must come before other blocks/);
    expect(problems).toMatch(/thinking block, but the target did not write/);
    expect(problems).toMatch(/thinking block without its signature/);
    expect(problems).toMatch(/must be user or assistant/);
  });

  it('Gemini: responses per call, names, a Gemini 3 call of the current turn without a signature', () => {
    const body = {
      contents: [
        { role: 'user', parts: [{ text: 'q' }] },
        { role: 'model', parts: [{ functionCall: { name: 'f', args: {} } }, { functionCall: { name: 'g', args: {} } }] },
        { role: 'user', parts: [{ functionResponse: { name: 'h', response: 'r' } }] },
      ],
    };
    const problems = checkRequest('gemini', body, { ...foreign, targetId: 'gemini-3-pro-preview' }).join('\n');
    expect(problems).toMatch(/1 function responses for 2 calls/);
    expect(problems).toMatch(/names "h", not a call before it/);
    expect(problems).toMatch(/response must be an object/);
    expect(problems).toMatch(/Gemini 3 needs a thoughtSignature/);
    // Gemini 2.x has no such rule, and the documented bypass value satisfies Gemini 3.
    const bypass = structuredClone(body);
    (bypass.contents[1]!.parts[0] as Record<string, unknown>).thoughtSignature = 'skip_thought_signature_validator';
    expect(checkRequest('gemini', bypass, { ...foreign, targetId: 'gemini-3-pro-preview' }).join('\n')).not.toMatch(/thoughtSignature/);
    expect(checkRequest('gemini', body, { ...foreign, targetId: 'gemini-2.5-flash' }).join('\n')).not.toMatch(/thoughtSignature/);
  });

  it('counts the calls sent against the calls of the conversation', () => {
    const body = { messages: [{ role: 'user', content: 'q' }] };
    expect(checkRequest('openai-chat', body, foreign)).toContain('0 tool calls were sent for the 1 of the conversation');
  });
});
