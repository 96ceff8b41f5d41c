/**
 * The provider-neutral view of a request ({@link ScriptRequest}), from each wire's body.
 * Bodies reach these functions validated, so they read without re-checking every type.
 */
import type { ModelApi } from '../model/types.js';
import type { ChatRequest, ScriptMessage, ScriptRequest, SeenToolCall } from './script.js';
import { isObject, type Route } from './wire-format.js';

type Body = Record<string, unknown>;
type Assistant = Extract<ScriptMessage, { role: 'assistant' }>;

/** The text of a content value: a string, or the joined `text` of its parts. */
function textOf(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  let out = '';
  for (const part of content) if (isObject(part) && typeof part.text === 'string' && part.thought !== true) out += part.text;
  return out;
}

function arrayOf(value: unknown): Body[] {
  return Array.isArray(value) ? value.filter(isObject) : [];
}

/** Proto JSON (Gemini) accepts both `camelCase` and `snake_case` field names. */
export function field(object: Body, camel: string, snake: string): unknown {
  return object[camel] ?? object[snake];
}

function assistant(): Assistant {
  return { role: 'assistant', content: '', toolCalls: [] };
}

function addThinking(message: Assistant, thinking: string): void {
  if (thinking !== '') message.thinking = (message.thinking ?? '') + thinking;
}

function finish(
  api: ModelApi,
  model: string,
  system: string[],
  messages: ScriptMessage[],
  toolNames: string[],
  stream: boolean,
  body: Body,
): ScriptRequest {
  const request: ScriptRequest = { api, model, messages, toolNames, stream, body };
  const prompt = system.filter((s) => s !== '').join('\n\n');
  if (prompt !== '') request.system = prompt;
  return request;
}

/** A Chat Completions request, seen neutrally. */
export function chatView(body: ChatRequest): ScriptRequest {
  const system: string[] = [];
  const messages: ScriptMessage[] = [];
  const names = new Map<string, string>();
  for (const message of body.messages) {
    const role = message.role;
    if (role === 'system' || role === 'developer') system.push(textOf(message.content));
    else if (role === 'user') messages.push({ role: 'user', content: textOf(message.content) });
    else if (role === 'assistant') {
      const seen = assistant();
      seen.content = textOf(message.content);
      if (typeof message.reasoning_content === 'string') addThinking(seen, message.reasoning_content);
      for (const call of message.tool_calls ?? []) {
        names.set(call.id, call.function.name);
        seen.toolCalls.push({ id: call.id, name: call.function.name, arguments: call.function.arguments });
      }
      messages.push(seen);
    } else if (role === 'tool') {
      const id = message.tool_call_id ?? '';
      messages.push({ role: 'tool', toolCallId: id, name: names.get(id) ?? '', content: textOf(message.content), isError: false });
    }
  }
  const tools = (body.tools ?? []).map((tool) => tool.function.name);
  return finish('openai-chat', body.model, system, messages, tools, body.stream === true, body);
}

/** An Anthropic Messages request, seen neutrally. */
export function anthropicView(body: Body): ScriptRequest {
  const messages: ScriptMessage[] = [];
  const names = new Map<string, string>();
  for (const message of arrayOf(body.messages)) {
    const content = message.content;
    if (message.role === 'assistant') {
      const seen = assistant();
      for (const block of typeof content === 'string' ? [{ type: 'text', text: content }] : arrayOf(content)) {
        if (block.type === 'text') seen.content += textOf([block]);
        else if (block.type === 'thinking' && typeof block.thinking === 'string') addThinking(seen, block.thinking);
        else if (block.type === 'tool_use') {
          const call: SeenToolCall = { id: String(block.id), name: String(block.name), arguments: JSON.stringify(block.input ?? {}) };
          names.set(call.id, call.name);
          seen.toolCalls.push(call);
        }
      }
      messages.push(seen);
      continue;
    }
    if (typeof content === 'string') {
      messages.push({ role: 'user', content });
      continue;
    }
    const blocks = arrayOf(content);
    let results = 0;
    for (const block of blocks) {
      if (block.type !== 'tool_result') continue;
      const id = String(block.tool_use_id);
      messages.push({
        role: 'tool',
        toolCallId: id,
        name: names.get(id) ?? '',
        content: textOf(block.content),
        isError: block.is_error === true,
      });
      results++;
    }
    if (results === 0 || blocks.some((b) => b.type === 'text'))
      messages.push({ role: 'user', content: textOf(blocks.filter((b) => b.type === 'text')) });
  }
  const tools = arrayOf(body.tools).flatMap((tool) => (typeof tool.name === 'string' ? [tool.name] : []));
  return finish('anthropic-messages', String(body.model), [textOf(body.system)], messages, tools, body.stream === true, body);
}

/**
 * An OpenAI Responses request, seen neutrally. The items of one model turn (reasoning,
 * message, function calls) arrive as separate input items; consecutive ones form one
 * assistant message.
 */
export function responsesView(body: Body): ScriptRequest {
  const system: string[] = typeof body.instructions === 'string' ? [body.instructions] : [];
  const messages: ScriptMessage[] = [];
  const names = new Map<string, string>();
  let turn: Assistant | undefined;
  const open = (): Assistant => {
    if (turn === undefined) {
      turn = assistant();
      messages.push(turn);
    }
    return turn;
  };
  const items = typeof body.input === 'string' ? [{ role: 'user', content: body.input }] : arrayOf(body.input);
  for (const item of items) {
    const type = item.type ?? 'message';
    if (type === 'message' && item.role === 'assistant') open().content += textOf(item.content);
    else if (type === 'reasoning') addThinking(open(), textOf(item.summary));
    else if (type === 'function_call') {
      const call: SeenToolCall = { id: String(item.call_id), name: String(item.name), arguments: String(item.arguments) };
      names.set(call.id, call.name);
      open().toolCalls.push(call);
    } else {
      turn = undefined;
      if (type === 'function_call_output') {
        const id = String(item.call_id);
        messages.push({ role: 'tool', toolCallId: id, name: names.get(id) ?? '', content: textOf(item.output), isError: false });
      } else if (type === 'message' && (item.role === 'system' || item.role === 'developer')) system.push(textOf(item.content));
      else if (type === 'message') messages.push({ role: 'user', content: textOf(item.content) });
    }
  }
  const tools = arrayOf(body.tools).flatMap((tool) => (typeof tool.name === 'string' ? [tool.name] : []));
  return finish('openai-responses', String(body.model), system, messages, tools, body.stream === true, body);
}

/** What a Gemini `functionResponse.response` says, as text: a lone string member, else its JSON. */
function responseText(response: unknown): string {
  if (isObject(response)) {
    const values = Object.values(response);
    if (values.length === 1 && typeof values[0] === 'string') return values[0];
  }
  return JSON.stringify(response ?? {});
}

/** A Gemini `generateContent` request, seen neutrally (the model and streaming come from the URL). */
export function geminiView(body: Body, route: Route): ScriptRequest {
  const messages: ScriptMessage[] = [];
  const instruction = field(body, 'systemInstruction', 'system_instruction');
  const system = isObject(instruction) ? [textOf(instruction.parts)] : [];
  for (const content of arrayOf(body.contents)) {
    const parts = arrayOf(content.parts);
    if (content.role === 'model') {
      const seen = assistant();
      for (const part of parts) {
        const call = field(part, 'functionCall', 'function_call');
        if (isObject(call)) {
          const name = String(call.name);
          seen.toolCalls.push({ id: typeof call.id === 'string' ? call.id : name, name, arguments: JSON.stringify(call.args ?? {}) });
        } else if (typeof part.text === 'string') {
          if (part.thought === true) addThinking(seen, part.text);
          else seen.content += part.text;
        }
      }
      messages.push(seen);
      continue;
    }
    let results = 0;
    for (const part of parts) {
      const result = field(part, 'functionResponse', 'function_response');
      if (!isObject(result)) continue;
      const name = String(result.name);
      const response = result.response;
      const isError = isObject(response) && Object.keys(response).length === 1 && 'error' in response;
      messages.push({
        role: 'tool',
        toolCallId: typeof result.id === 'string' ? result.id : name,
        name,
        content: responseText(response),
        isError,
      });
      results++;
    }
    if (results === 0 || parts.some((p) => typeof p.text === 'string')) messages.push({ role: 'user', content: textOf(parts) });
  }
  const tools = arrayOf(body.tools).flatMap((tool) =>
    arrayOf(field(tool, 'functionDeclarations', 'function_declarations')).map((d) => String(d.name)),
  );
  return finish('gemini', route.model ?? '', system, messages, tools, route.stream === true, body);
}
