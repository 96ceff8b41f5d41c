/**
 * Reading tool calls out of a model's text as it streams (prompted tools, for models
 * without native tool calling): the `<tool_call>…</tool_call>` form Hermes- and Qwen-style
 * chat templates use, and a fenced JSON block (```` ```json ````) naming an offered tool.
 * Several calls may follow each other in one answer. Text outside the calls is the answer,
 * streamed as it comes except for what might open a call, which is held until it is clear.
 *
 * {@link PromptedCallReader} sits between a wire's stream and its consumer: it relays
 * thinking and usage as they are, turns the text into text and `tool_call` blocks, and
 * ends with the message those blocks make (`stopReason: 'tool_use'` when it holds calls).
 */
import { randomUUID } from 'node:crypto';
import { jsonrepair } from 'jsonrepair';
import type { EventStream } from './event-stream.js';
import { isRecord } from './json.js';
import type { AssistantMessage, AssistantStreamEvent, TextContent, ThinkingContent, ToolCall } from './types.js';

const TAG_OPEN = '<tool_call>';
const TAG_CLOSE = '</tool_call>';
const FENCE = '```';
/** Info strings of a fence that may hold a call (` ```json `, ` ```tool_call `, or none). */
const CALL_FENCE_INFO = /^(?:json|tool_call|tool|)$/i;

/** A call as read from the text: the name and the argument text as the model wrote it. */
export interface PromptedCall {
  name: string;
  rawArguments: string;
}

/**
 * The call `text` (the inside of a `<tool_call>` block or of a fence) writes, or
 * `undefined` when it names none. JSON that is not quite JSON (single quotes, a missing
 * comma) is read with jsonrepair; when even that fails, the name and the argument text are
 * taken from where they stand, so that the dispatcher's repair and validation answer the
 * model with a guided error, as for a malformed native call.
 */
export function parseCallText(text: string): PromptedCall | undefined {
  const trimmed = text.trim();
  const value = parseLoose(trimmed);
  if (isRecord(value) && typeof value.name === 'string') {
    const args = value.arguments ?? value.parameters ?? value.args;
    const raw = argumentText(trimmed);
    if (typeof args === 'string') return { name: value.name, rawArguments: args };
    // The model's own argument text, as with a native call: the dispatcher repairs it (and
    // says what it repaired) or answers with what is wrong.
    if (raw !== undefined) return { name: value.name, rawArguments: raw };
    return { name: value.name, rawArguments: args === undefined ? '{}' : JSON.stringify(args) };
  }
  const name = /["']?name["']?\s*:\s*["']([^"']+)["']/.exec(trimmed)?.[1];
  if (name === undefined) return undefined;
  return { name, rawArguments: argumentText(trimmed) ?? '' };
}

function parseLoose(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    try {
      return JSON.parse(jsonrepair(text));
    } catch {
      return undefined;
    }
  }
}

/** The text of the `arguments` (or `parameters`) value, up to its balanced end; `undefined` when there is none. */
function argumentText(text: string): string | undefined {
  const key = /["']?(?:arguments|parameters|args)["']?\s*:\s*/.exec(text);
  if (key === null) return undefined;
  const start = key.index + key[0].length;
  const open = text[start];
  if (open !== '{' && open !== '[') return undefined;
  let depth = 0;
  let quote: string | undefined;
  for (let i = start; i < text.length; i++) {
    const c = text[i];
    if (quote !== undefined) {
      if (c === '\\') i++;
      else if (c === quote) quote = undefined;
    } else if (c === '"' || c === "'") quote = c;
    else if (c === '{' || c === '[') depth++;
    else if (c === '}' || c === ']') {
      depth--;
      if (depth === 0) return text.slice(start, i + 1);
    }
  }
  // Cut short: what there is (the dispatcher names what is missing).
  return text.slice(start);
}

/** Where in `text` an opener begins, or where a tail that may become one begins. */
function holdFrom(text: string): number {
  for (const opener of [TAG_OPEN, FENCE]) {
    for (let length = Math.min(opener.length - 1, text.length); length > 0; length--) {
      if (text.endsWith(opener.slice(0, length))) return text.length - length;
    }
  }
  return text.length;
}

/** Relays one wire's events, reading prompted tool calls out of its text. */
export class PromptedCallReader {
  private readonly content: AssistantMessage['content'] = [];
  /** The text block open now, if any. */
  private text: TextContent | undefined;
  /** Out index of each inner thinking block. */
  private readonly thinkingIndex = new Map<number, number>();
  /** Text not yet emitted: a tail that may open a call, or a call's body so far. */
  private pending = '';
  private mode: 'text' | 'tag' | 'fence' = 'text';
  /** Whitespace after a call, emitted only when more text follows. */
  private gap = '';
  private calls = 0;

  constructor(
    private readonly out: EventStream<AssistantStreamEvent, AssistantMessage>,
    /** The tools offered: a fence is a call only when it names one of them. */
    private readonly toolNames: ReadonlySet<string>,
    /** Ids already in the run (`StreamOptions.toolCallIds`): a new call never takes one. */
    private readonly runIds?: ReadonlySet<string>,
  ) {}

  /** One event of the wire's stream. */
  readonly push = (event: AssistantStreamEvent): void => {
    switch (event.type) {
      case 'text_delta':
        this.feed(event.delta);
        return;
      case 'text_start':
      case 'text_end':
        return;
      case 'thinking_start':
        this.closeText();
        this.thinkingIndex.set(event.index, this.content.length);
        this.content.push({ type: 'thinking', thinking: '' });
        this.out.push({ type: 'thinking_start', index: this.content.length - 1 });
        return;
      case 'thinking_delta': {
        const index = this.thinkingIndex.get(event.index);
        if (index === undefined) return;
        (this.content[index] as ThinkingContent).thinking += event.delta;
        this.out.push({ type: 'thinking_delta', index, delta: event.delta });
        return;
      }
      case 'thinking_end': {
        const index = this.thinkingIndex.get(event.index);
        if (index === undefined) return;
        const block = this.content[index] as ThinkingContent;
        block.thinking = event.thinking;
        this.out.push({ type: 'thinking_end', index, thinking: block.thinking });
        return;
      }
      case 'done':
      case 'error':
        this.finish(event);
        return;
      default:
        // `start`, and native tool call events a server sent anyway: relayed as they are
        // would clash with the indices here, so native calls are taken from the message.
        if (event.type === 'start' || event.type === 'retry' || event.type === 'attempt') this.out.push(event);
    }
  };

  private feed(delta: string): void {
    this.pending += delta;
    for (;;) {
      if (this.mode === 'text') {
        const tag = this.pending.indexOf(TAG_OPEN);
        const fence = this.pending.indexOf(FENCE);
        const at = tag === -1 ? fence : fence === -1 ? tag : Math.min(tag, fence);
        if (at === -1) {
          const hold = holdFrom(this.pending);
          this.emitText(this.pending.slice(0, hold));
          this.pending = this.pending.slice(hold);
          return;
        }
        this.emitText(this.pending.slice(0, at));
        if (at === tag) {
          this.mode = 'tag';
          this.pending = this.pending.slice(at + TAG_OPEN.length);
        } else {
          this.mode = 'fence';
          this.pending = this.pending.slice(at + FENCE.length);
        }
        continue;
      }
      if (this.mode === 'tag') {
        const end = this.pending.indexOf(TAG_CLOSE);
        if (end === -1) return;
        this.call(this.pending.slice(0, end));
        this.pending = this.pending.slice(end + TAG_CLOSE.length);
        this.mode = 'text';
        continue;
      }
      // A fence: its info line, then its body up to the closing fence.
      const end = this.pending.indexOf(FENCE);
      if (end === -1) return;
      const inside = this.pending.slice(0, end);
      this.pending = this.pending.slice(end + FENCE.length);
      this.mode = 'text';
      const newline = inside.indexOf('\n');
      const info = newline === -1 ? '' : inside.slice(0, newline).trim();
      const call = newline !== -1 && CALL_FENCE_INFO.test(info) ? parseCallText(inside.slice(newline + 1)) : undefined;
      if (call !== undefined && this.toolNames.has(call.name)) this.addCall(call);
      else this.emitText(`${FENCE}${inside}${FENCE}`);
    }
  }

  /** The body of a `<tool_call>` block: always a call (a malformed one is answered with a guided error). */
  private call(body: string): void {
    this.addCall(parseCallText(body) ?? { name: '', rawArguments: body.trim() });
  }

  private addCall(call: PromptedCall): void {
    this.closeText();
    this.gap = '';
    const toolCall: ToolCall = {
      type: 'tool_call',
      id: this.newId(),
      name: call.name,
      arguments: argumentsOf(call.rawArguments),
      rawArguments: call.rawArguments,
    };
    const index = this.content.length;
    this.content.push(toolCall);
    this.calls++;
    this.out.push({ type: 'tool_call_start', index, id: toolCall.id, name: toolCall.name });
    if (call.rawArguments !== '')
      this.out.push({ type: 'tool_call_delta', index, delta: call.rawArguments, partialArguments: toolCall.arguments });
    this.out.push({ type: 'tool_call_end', index, toolCall });
  }

  private newId(): string {
    for (;;) {
      const id = `call_${randomUUID().replace(/-/g, '').slice(0, 24)}`;
      if (this.runIds === undefined || !this.runIds.has(id)) return id;
    }
  }

  private emitText(text: string): void {
    if (text === '') return;
    if (this.text === undefined && this.calls > 0 && text.trim() === '') {
      // Blank lines between and after calls are no answer of their own.
      this.gap += text;
      return;
    }
    if (this.text === undefined) {
      this.text = { type: 'text', text: '' };
      this.content.push(this.text);
      this.out.push({ type: 'text_start', index: this.content.length - 1 });
      text = this.gap + text;
      this.gap = '';
    }
    this.text.text += text;
    this.out.push({ type: 'text_delta', index: this.content.length - 1, delta: text });
  }

  private closeText(): void {
    if (this.text === undefined) return;
    const index = this.content.lastIndexOf(this.text);
    this.out.push({ type: 'text_end', index, text: this.text.text });
    this.text = undefined;
  }

  private finish(event: Extract<AssistantStreamEvent, { type: 'done' | 'error' }>): void {
    const complete = event.type === 'done';
    // The end of the answer closes what it left open: a `<tool_call>` without its closing
    // tag is a call when the answer ended by itself (models often drop the tag), and an
    // unclosed fence, or a call cut by the output limit, stays text.
    if (this.mode === 'tag' && complete && event.message.stopReason === 'stop') this.call(this.pending);
    else if (this.mode === 'tag') this.emitText(`${TAG_OPEN}${this.pending}`);
    else if (this.mode === 'fence') this.emitText(`${FENCE}${this.pending}`);
    else this.emitText(this.pending);
    this.pending = '';
    this.closeText();
    const inner = event.message;
    // The wire's own thinking blocks, in order: their signatures go back with them.
    const thinking = inner.content.filter((block) => block.type === 'thinking');
    let next = 0;
    for (let i = 0; i < this.content.length; i++) {
      if (this.content[i]?.type === 'thinking' && next < thinking.length) this.content[i] = thinking[next++] as ThinkingContent;
    }
    // Native calls a server sent although no tools were: kept, after the prompted ones.
    for (const block of inner.content) if (block.type === 'tool_call') this.content.push(block);
    const hasCalls = this.content.some((block) => block.type === 'tool_call');
    const message: AssistantMessage = { ...inner, content: this.content };
    if (complete && hasCalls && inner.stopReason === 'stop') message.stopReason = 'tool_use';
    if (event.type === 'done') this.out.push({ type: 'done', message });
    else this.out.push({ type: 'error', error: event.error, message });
    this.out.end(message);
  }
}

function argumentsOf(raw: string): Record<string, unknown> {
  try {
    const value: unknown = JSON.parse(raw);
    return isRecord(value) ? value : {};
  } catch {
    return {};
  }
}
