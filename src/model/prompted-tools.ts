/**
 * Prompted tools: tool calling for models without it. The tools are described in the
 * system prompt (name, description, JSON Schema), the model writes its calls in its text
 * (`<tool_call>{"name": …, "arguments": …}</tool_call>`, or a fenced JSON block), and
 * `prompted-calls.ts` reads them back as ordinary `tool_call` blocks, so the loop, the
 * dispatcher (repair, validation, permissions, approvals) and the events stay the same.
 * Earlier calls go back to the model as the text it wrote, and results as user messages
 * (`<tool_response name="…">…</tool_response>`).
 *
 * Which way a model gets its tools ({@link toolCallingOf}): `ModelRef.toolCalling` when
 * set (`modelConfig.toolCalling`, `providers.x.toolCalling`, `--tool-calling`); else what
 * the server taught rein (a refusal of `tools`: `chat-refusals.ts`); else the catalog's
 * word for the model; else `native`.
 */
import { lookupModel } from './catalog.js';
import { EventStream } from './event-stream.js';
import { learnedQuirks } from './learned-quirks.js';
import { PromptedCallReader } from './prompted-calls.js';
import type {
  AssistantMessage,
  AssistantStream,
  AssistantStreamEvent,
  Context,
  Message,
  ModelRef,
  StreamFunction,
  StreamOptions,
  TextContent,
  ToolCalling,
  ToolSpec,
  UserMessage,
} from './types.js';

const catalogSays = new WeakMap<ModelRef, ToolCalling>();

/** How `model` gets its tools now (see the module's comment for the order). */
export function toolCallingOf(model: ModelRef): ToolCalling {
  if (model.toolCalling !== undefined) return model.toolCalling;
  const learned = learnedQuirks(model.baseUrl, model.id)?.toolCalling;
  if (learned !== undefined) return learned;
  let said = catalogSays.get(model);
  if (said === undefined) {
    said = lookupModel(model.provider, model.id).toolCalling ?? 'native';
    catalogSays.set(model, said);
  }
  return said;
}

/**
 * Streams `model`'s answer through `inner` with the tools of `context` in the prompt and
 * the calls read from its text. Like every adapter, it never throws.
 */
export function streamPrompted(inner: StreamFunction, model: ModelRef, context: Context, options?: StreamOptions): AssistantStream {
  const out = new EventStream<AssistantStreamEvent, AssistantMessage>();
  const reader = readerFor(out, context, options);
  const stream = inner(model, promptedContext(context), options);
  relayInto(stream, reader.push);
  return out;
}

/** A reader of prompted calls that ends `out`, for the tools of `context`. */
export function readerFor(
  out: EventStream<AssistantStreamEvent, AssistantMessage>,
  context: Context,
  options?: StreamOptions,
): PromptedCallReader {
  return new PromptedCallReader(out, new Set((context.tools ?? []).map((tool) => tool.name)), options?.toolCallIds);
}

function relayInto(stream: AssistantStream, push: (event: AssistantStreamEvent) => void): void {
  if (stream.listen !== undefined) {
    void stream.listen(push);
    return;
  }
  void (async () => {
    for await (const event of stream) push(event);
  })();
}

const systems = new WeakMap<readonly ToolSpec[], Map<string, string>>();

/** `context` as a model without tool calling takes it: no `tools`, the tools described in the system prompt, calls and results as text. */
export function promptedContext(context: Context): Context {
  const tools = context.tools ?? [];
  let bySystem = systems.get(tools);
  if (bySystem === undefined) {
    bySystem = new Map();
    systems.set(tools, bySystem);
  }
  const base = context.system ?? '';
  let system = bySystem.get(base);
  if (system === undefined) {
    system = base === '' ? toolsPrompt(tools) : `${base}\n\n${toolsPrompt(tools)}`;
    if (bySystem.size > 16) bySystem.clear();
    bySystem.set(base, system);
  }
  return { system, messages: promptedHistory(context.messages) };
}

/** The description of `tools` the system prompt carries, and how to call them. */
export function toolsPrompt(tools: readonly ToolSpec[]): string {
  const lines = [
    '# Tools',
    '',
    'You can call the tools below. To call one, write a block of this form in your answer:',
    '',
    '<tool_call>',
    '{"name": "<tool name>", "arguments": {<the arguments, as JSON valid against the tool\'s parameters>}}',
    '</tool_call>',
    '',
    'Write one block per call; to make several calls at once, write several blocks. After your calls, stop: the results come back in the next message, each as <tool_response name="<tool name>">…</tool_response>. A result marked error="true" says what went wrong: correct the call and try again. When you need no tool, answer in plain text, without a block.',
  ];
  for (const tool of tools) {
    lines.push(
      '',
      `## ${tool.name}`,
      '',
      tool.description === '' ? '(no description)' : tool.description,
      '',
      `Parameters (JSON Schema): ${JSON.stringify(tool.parameters)}`,
    );
  }
  return lines.join('\n');
}

// Messages are never changed once in a history, so each converts once: the chat body cache,
// keyed by message, then keeps its JSON across requests as it does for native tools.
const converted = new WeakMap<Message, Message>();

function promptedHistory(messages: Message[]): Message[] {
  const out: Message[] = new Array<Message>(messages.length);
  for (let i = 0; i < messages.length; i++) {
    const message = messages[i] as Message;
    let one = converted.get(message);
    if (one === undefined) {
      one = promptedMessage(message);
      converted.set(message, one);
    }
    out[i] = one;
  }
  return out;
}

function promptedMessage(message: Message): Message {
  if (message.role === 'user') return message;
  if (message.role === 'tool') {
    const attrs = `name=${JSON.stringify(message.toolName)}${message.isError ? ' error="true"' : ''}`;
    const content: UserMessage['content'] = [{ type: 'text', text: `<tool_response ${attrs}>\n` }];
    for (const part of message.content) content.push(part);
    content.push({ type: 'text', text: '\n</tool_response>' });
    // All text: one string, which every server takes.
    if (content.every((part) => part.type === 'text'))
      return { role: 'user', content: (content as TextContent[]).map((part) => part.text).join('') };
    return { role: 'user', content };
  }
  if (!message.content.some((block) => block.type === 'tool_call')) return message;
  const content: AssistantMessage['content'] = [];
  let text: TextContent | undefined;
  for (const block of message.content) {
    if (block.type === 'thinking') {
      content.push(block);
      text = undefined;
      continue;
    }
    const piece =
      block.type === 'text'
        ? block.text
        : `${text === undefined || text.text.endsWith('\n') ? '' : '\n'}<tool_call>\n${JSON.stringify({ name: block.name, arguments: argumentsValue(block.rawArguments, block.arguments) })}\n</tool_call>\n`;
    if (text === undefined) {
      text = { type: 'text', text: piece };
      content.push(text);
    } else text.text += piece;
  }
  return { ...message, content };
}

/** The arguments as the model wrote them when they are JSON, else as parsed. */
function argumentsValue(raw: string, parsed: Record<string, unknown>): unknown {
  try {
    return JSON.parse(raw) as unknown;
  } catch {
    return parsed;
  }
}
