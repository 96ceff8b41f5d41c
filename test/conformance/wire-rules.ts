/**
 * What each wire API accepts in a request's history, written from the APIs' documented
 * rules and the errors they answer with, independently of rein's adapters. Each checker
 * returns the rules a captured request body breaks, as readable lines (empty = valid).
 */
import type { AssistantMessage, ModelApi } from '../../src/model/types.js';

type Json = Record<string, unknown>;

/** What the checker knows of the conversation that was sent. */
export interface HandoffCase {
  /** The assistant turn with tool calls, as rein decoded it from the source provider. */
  source: AssistantMessage;
  /** True when the target is the very model that wrote `source` (its signatures apply). */
  own: boolean;
  /** The target model id (Gemini 3 has rules of its own). */
  targetId: string;
}

/** Every rule of `api` that `body` breaks. */
export function checkRequest(api: ModelApi, body: unknown, handoff: HandoffCase): string[] {
  if (!isRecord(body)) return [`the request body is not a JSON object: ${JSON.stringify(body)?.slice(0, 200)}`];
  const problems = [...RULES[api](body, handoff), ...checkSignatures(body, handoff)];
  // Every call of the conversation must reach the target: dropping one is no fix.
  const expected = handoff.source.content.filter((block) => block.type === 'tool_call').length;
  const sent = countCalls(api, body);
  if (sent !== expected) problems.push(`${sent} tool calls were sent for the ${expected} of the conversation`);
  return problems;
}

/** How many tool calls a request body replays. */
function countCalls(api: ModelApi, body: Json): number {
  const items = (value: unknown): Json[] => (Array.isArray(value) ? value.filter(isRecord) : []);
  if (api === 'openai-chat') return items(body.messages).reduce((n, m) => n + items(m.tool_calls).length, 0);
  if (api === 'openai-responses') return items(body.input).filter((item) => item.type === 'function_call').length;
  if (api === 'anthropic-messages')
    return items(body.messages).reduce((n, m) => n + items(m.content).filter((b) => b.type === 'tool_use').length, 0);
  return items(body.contents).reduce((n, c) => n + items(c.parts).filter((p) => isRecord(p.functionCall)).length, 0);
}

const RULES: Record<ModelApi, (body: Json, handoff: HandoffCase) => string[]> = {
  'openai-chat': checkChat,
  'openai-responses': checkResponses,
  'anthropic-messages': checkAnthropic,
  gemini: checkGemini,
};

/** Every opaque signature of the source turn (thinking, text, tool calls). */
export function signaturesOf(message: AssistantMessage): string[] {
  return message.content.flatMap((block) => (block.signature !== undefined && block.signature !== '' ? [block.signature] : []));
}

/**
 * Another model's signatures are meaningless to the target, and rejected: none may be sent.
 * (What a model's own turn must carry back is an API rule, checked per API.)
 */
function checkSignatures(body: Json, { source, own }: HandoffCase): string[] {
  if (own) return [];
  const text = JSON.stringify(body);
  return signaturesOf(source)
    .filter((signature) => text.includes(JSON.stringify(signature)))
    .map((signature) => `a foreign signature was sent: ${signature.slice(0, 40)}…`);
}

// ---------------------------------------------------------------- Chat Completions

/**
 * Chat Completions: roles system/developer/user/assistant/tool; every assistant
 * `tool_calls` entry answered by a `tool` message right after it (before any other
 * message); no `tool` message without its call; ids at most 40 characters ("Invalid
 * 'messages[2].tool_calls[0].id': string too long. Expected a string with maximum length
 * 40" from OpenAI and Azure); `arguments` a JSON object text.
 */
function checkChat(body: Json): string[] {
  const problems: string[] = [];
  const messages = arrayOf(body.messages, 'messages', problems);
  let open: Set<string> | undefined;
  const seen = new Set<string>();
  messages.forEach((message, i) => {
    const role = message.role;
    if (!['system', 'developer', 'user', 'assistant', 'tool'].includes(String(role)))
      problems.push(`messages[${i}].role ${JSON.stringify(role)} is not a Chat Completions role`);
    if (role === 'tool') {
      const id = message.tool_call_id;
      if (typeof id !== 'string' || !open?.delete(id))
        problems.push(
          `messages[${i}] answers tool call ${JSON.stringify(id)}, which the assistant message before it did not make (or it was answered already)`,
        );
      if (typeof message.content !== 'string' && !Array.isArray(message.content))
        problems.push(`messages[${i}].content of a tool message must be text`);
      return;
    }
    if (open !== undefined && open.size > 0) problems.push(`tool calls ${[...open].join(', ')} are not answered before messages[${i}]`);
    open = undefined;
    if (role !== 'assistant' || message.tool_calls === undefined) return;
    open = new Set();
    arrayOf(message.tool_calls, `messages[${i}].tool_calls`, problems).forEach((call, j) => {
      const where = `messages[${i}].tool_calls[${j}]`;
      const fn = isRecord(call.function) ? call.function : {};
      if (call.type !== 'function') problems.push(`${where}.type must be "function"`);
      if (typeof fn.name !== 'string' || fn.name === '') problems.push(`${where}.function.name is missing`);
      if (!isObjectText(fn.arguments))
        problems.push(`${where}.function.arguments must be the text of a JSON object, got ${JSON.stringify(fn.arguments)}`);
      const id = call.id;
      if (typeof id !== 'string' || id === '' || id.length > 40)
        problems.push(`${where}.id ${JSON.stringify(id)} must be a string of 1 to 40 characters`);
      else if (seen.has(id)) problems.push(`${where}.id ${id} is used twice`);
      else {
        seen.add(id);
        open?.add(id);
      }
    });
  });
  if (open !== undefined && open.size > 0) problems.push(`tool calls ${[...open].join(', ')} are never answered`);
  return problems;
}

// ---------------------------------------------------------------- Responses

/**
 * Responses `input`: messages (user/assistant/system/developer), `function_call` items
 * with a `call_id` and object-text `arguments` (an item `id`, when sent, must start with
 * "fc": "Expected an ID that begins with 'fc'"), each answered by a later
 * `function_call_output` with the same `call_id`; `reasoning` items only the model's
 * own (`rs_` ids), and a function call sent with its item id needs the reasoning item it
 * came with ("…was provided without its required 'reasoning' item").
 */
function checkResponses(body: Json, { source, own }: HandoffCase): string[] {
  const problems: string[] = [];
  const input = arrayOf(body.input, 'input', problems);
  const calls = new Map<string, number>();
  const answered = new Set<string>();
  let reasoningSeen = false;
  input.forEach((item, i) => {
    const type = item.type ?? 'message';
    if (type === 'message') {
      if (!['user', 'assistant', 'system', 'developer'].includes(String(item.role)))
        problems.push(`input[${i}].role ${JSON.stringify(item.role)} is not a Responses role`);
    } else if (type === 'function_call') {
      const callId = item.call_id;
      if (typeof callId !== 'string' || callId === '') problems.push(`input[${i}].call_id is missing`);
      else if (calls.has(callId)) problems.push(`input[${i}].call_id ${callId} is used twice`);
      else calls.set(callId, i);
      if (typeof item.name !== 'string' || item.name === '') problems.push(`input[${i}].name is missing`);
      if (!isObjectText(item.arguments))
        problems.push(`input[${i}].arguments must be the text of a JSON object, got ${JSON.stringify(item.arguments)}`);
      if (item.id !== undefined) {
        if (typeof item.id !== 'string' || !item.id.startsWith('fc'))
          problems.push(`input[${i}].id ${JSON.stringify(item.id)} must begin with "fc"`);
        if (hasThinking(source) && !reasoningSeen)
          problems.push(`input[${i}] is sent with its item id but without the reasoning item it came with`);
      }
    } else if (type === 'function_call_output') {
      const callId = item.call_id;
      if (typeof callId !== 'string' || !calls.has(callId))
        problems.push(`input[${i}] answers call ${JSON.stringify(callId)}, which no earlier function_call made`);
      else if (answered.has(callId)) problems.push(`input[${i}] answers call ${callId} a second time`);
      else answered.add(callId);
      if (typeof item.output !== 'string' && !Array.isArray(item.output)) problems.push(`input[${i}].output must be text`);
    } else if (type === 'reasoning') {
      reasoningSeen = true;
      if (!own) problems.push(`input[${i}] is a reasoning item, but the target did not write the turn it comes from`);
      if (typeof item.id !== 'string' || !item.id.startsWith('rs_'))
        problems.push(`input[${i}].id ${JSON.stringify(item.id)} of a reasoning item must begin with "rs_"`);
    } else {
      problems.push(`input[${i}].type ${JSON.stringify(type)} is not expected in a replayed history`);
    }
  });
  for (const callId of calls.keys()) if (!answered.has(callId)) problems.push(`function call ${callId} is never answered`);
  return problems;
}

// ---------------------------------------------------------------- Anthropic Messages

const ANTHROPIC_ID = /^[a-zA-Z0-9_-]{1,64}$/;

/**
 * Messages: roles user/assistant only (system is a top-level field); every `tool_use` id
 * matching ^[a-zA-Z0-9_-]+$ and answered by a `tool_result` in the very next message, a
 * user message, results before anything else in it; no `tool_result` without its call;
 * `input` an object; `thinking` blocks only the model's own, each with its signature.
 */
function checkAnthropic(body: Json, { own }: HandoffCase): string[] {
  const problems: string[] = [];
  const messages = arrayOf(body.messages, 'messages', problems);
  if (messages[0]?.role !== 'user') problems.push('the first message must be a user message');
  let pending: Set<string> | undefined;
  const seen = new Set<string>();
  messages.forEach((message, i) => {
    if (message.role !== 'user' && message.role !== 'assistant')
      problems.push(`messages[${i}].role ${JSON.stringify(message.role)} must be user or assistant`);
    const blocks = typeof message.content === 'string' ? [] : arrayOf(message.content, `messages[${i}].content`, problems);
    if (pending !== undefined) {
      if (message.role !== 'user')
        problems.push(`tool calls ${[...pending].join(', ')} must be answered by the next message, a user message`);
      let leading = true;
      blocks.forEach((block, j) => {
        if (block.type !== 'tool_result') {
          leading = false;
          return;
        }
        if (!leading) problems.push(`messages[${i}].content[${j}]: tool results must come before other blocks`);
        if (typeof block.tool_use_id !== 'string' || !pending?.delete(block.tool_use_id))
          problems.push(`messages[${i}].content[${j}] answers ${JSON.stringify(block.tool_use_id)}, not a call of the message before`);
      });
      if (pending.size > 0) problems.push(`tool calls ${[...pending].join(', ')} are not answered in messages[${i}]`);
      pending = undefined;
    } else {
      blocks.forEach((block, j) => {
        if (block.type === 'tool_result') problems.push(`messages[${i}].content[${j}] is a tool result with no call in the message before`);
      });
    }
    if (message.role !== 'assistant') return;
    blocks.forEach((block, j) => {
      const where = `messages[${i}].content[${j}]`;
      if (block.type === 'tool_use') {
        const id = block.id;
        if (typeof id !== 'string' || !ANTHROPIC_ID.test(id))
          problems.push(`${where}.id ${JSON.stringify(id)} must match ^[a-zA-Z0-9_-]{1,64}$`);
        else if (seen.has(id)) problems.push(`${where}.id ${id} is used twice`);
        else {
          seen.add(id);
          (pending ??= new Set()).add(id);
        }
        if (!isRecord(block.input)) problems.push(`${where}.input must be an object`);
      } else if (block.type === 'thinking' || block.type === 'redacted_thinking') {
        if (!own) problems.push(`${where} is a ${String(block.type)} block, but the target did not write the turn it comes from`);
        if (block.type === 'thinking' && (typeof block.signature !== 'string' || block.signature === ''))
          problems.push(`${where} is a thinking block without its signature`);
      }
    });
  });
  if (pending !== undefined && pending.size > 0) problems.push(`tool calls ${[...pending].join(', ')} are never answered`);
  return problems;
}

// ---------------------------------------------------------------- Gemini

/** The values Gemini documents for a function call whose signature was lost or never existed. */
const GEMINI_BYPASS_SIGNATURES = new Set(['skip_thought_signature_validator', 'context_engineering_is_the_way_to_go']);

/**
 * Gemini `contents`: roles user/model (or function); every model turn's `functionCall`
 * parts answered by as many `functionResponse` parts in the next content, with the same
 * names (and ids, when ids are sent); `args` and `response` objects. Gemini 3 rejects a
 * function call of the current turn whose first `functionCall` part has no
 * `thoughtSignature`: a call it did not write needs the documented bypass value.
 */
function checkGemini(body: Json, { source, own, targetId }: HandoffCase): string[] {
  const problems: string[] = [];
  const contents = arrayOf(body.contents, 'contents', problems);
  let pending: Array<{ name: unknown; id: unknown }> | undefined;
  contents.forEach((content, i) => {
    if (!['user', 'model', 'function'].includes(String(content.role)))
      problems.push(`contents[${i}].role ${JSON.stringify(content.role)} must be user or model`);
    const parts = arrayOf(content.parts, `contents[${i}].parts`, problems);
    const responses = parts.flatMap((part) => (isRecord(part.functionResponse) ? [part.functionResponse] : []));
    if (pending !== undefined) {
      if (content.role === 'model') problems.push(`contents[${i}]: the function calls before it are not answered`);
      const names = pending.map((c) => c.name);
      if (responses.length !== pending.length)
        problems.push(`contents[${i}] has ${responses.length} function responses for ${pending.length} calls`);
      responses.forEach((response, j) => {
        if (!names.includes(response.name))
          problems.push(`contents[${i}] function response ${j} names ${JSON.stringify(response.name)}, not a call before it`);
        if (!isRecord(response.response)) problems.push(`contents[${i}] function response ${j}: response must be an object`);
        if (response.id !== undefined && !pending?.some((c) => c.id === response.id))
          problems.push(`contents[${i}] function response ${j} id ${JSON.stringify(response.id)} matches no call`);
      });
      pending = undefined;
    } else if (responses.length > 0) {
      problems.push(`contents[${i}] has function responses without calls before it`);
    }
    const calls = parts.filter((part) => isRecord(part.functionCall));
    if (content.role === 'model' && calls.length > 0) {
      pending = calls.map((part) => ({ name: (part.functionCall as Json).name, id: (part.functionCall as Json).id }));
      calls.forEach((part, j) => {
        if (!isRecord((part.functionCall as Json).args)) problems.push(`contents[${i}] function call ${j}: args must be an object`);
      });
      const first = calls[0] as Json;
      if (targetId.startsWith('gemini-3') && isCurrentTurn(contents, i)) {
        const signature = first.thoughtSignature;
        const accepted = own ? signaturesOf(source).includes(String(signature)) : GEMINI_BYPASS_SIGNATURES.has(String(signature));
        if (!accepted)
          problems.push(
            `contents[${i}]: Gemini 3 needs a thoughtSignature on the first function call of the current turn (${own ? 'its own' : 'the documented bypass value for a call it did not write'}), got ${JSON.stringify(signature)}`,
          );
      }
    }
  });
  if (pending !== undefined) problems.push('the last function calls are never answered');
  return problems;
}

/** True when no user text follows content `i`: it belongs to the turn being answered. */
function isCurrentTurn(contents: Json[], i: number): boolean {
  return !contents
    .slice(i + 1)
    .some((c) => c.role === 'user' && Array.isArray(c.parts) && c.parts.some((p) => isRecord(p) && typeof p.text === 'string'));
}

// ---------------------------------------------------------------- helpers

function hasThinking(message: AssistantMessage): boolean {
  return message.content.some((block) => block.type === 'thinking');
}

function isObjectText(value: unknown): boolean {
  if (typeof value !== 'string') return false;
  try {
    return isRecord(JSON.parse(value));
  } catch {
    return false;
  }
}

function arrayOf(value: unknown, where: string, problems: string[]): Json[] {
  if (!Array.isArray(value)) {
    problems.push(`${where} is not an array`);
    return [];
  }
  return value.filter((item): item is Json => {
    if (isRecord(item)) return true;
    problems.push(`${where} holds a non-object: ${JSON.stringify(item)}`);
    return false;
  });
}

function isRecord(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
