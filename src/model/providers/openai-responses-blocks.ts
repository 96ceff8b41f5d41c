/**
 * The output items of one Responses response as rein content blocks, with their events.
 *
 * Each item becomes one block: `message` → text (its id, and phase when there is one, kept
 * as JSON in the signature), `reasoning` → thinking (summary or raw reasoning text; the whole
 * item kept as JSON in the signature, to go back encrypted), `function_call` → a tool call
 * (`call_id` as its id, the `fc_…` item id in the signature). Text that a server sends only
 * in `.done` events or in `output_item.done` (LM Studio's function arguments; non-streaming
 * bodies) is emitted as a delta there, so the deltas of a block always add up to it.
 */
import { randomUUID } from 'node:crypto';
import type { EventStream } from '../event-stream.js';
import { PartialJsonParser } from '../partial-json.js';
import type { AssistantMessage, AssistantStreamEvent, TextContent, ThinkingContent, ToolCall } from '../types.js';
import { isRecord, type Json } from '../json.js';
import { MAX_ARGUMENT_CHARS, parseArgumentObject } from '../json-limits.js';

interface Slot {
  kind: 'message' | 'reasoning' | 'function_call';
  item: Json;
  /** Position of the block in `message.content`; undefined until the block starts. */
  index: number | undefined;
  block: TextContent | ThinkingContent | ToolCall | undefined;
  parser: PartialJsonParser | undefined;
  /** The content / summary part streamed last (`c0`, `s1`, …). */
  part: string | undefined;
  /** The text streamed per part, to reconcile `.done` events. */
  parts: Map<string, string>;
  ended: boolean;
}

/** Turns output items and their deltas into blocks of `message` and events on `out`. */
export class OutputBlocks {
  private readonly slots: Slot[] = [];
  private readonly byKey = new Map<string, Slot>();
  private readonly callIds = new Set<string>();

  constructor(
    private readonly out: EventStream<AssistantStreamEvent, AssistantMessage>,
    private readonly message: AssistantMessage,
    /** Ids of the run's earlier calls (`StreamOptions.toolCallIds`): a repeat is renamed. */
    private readonly runIds?: ReadonlySet<string>,
  ) {}

  /** `output_item.added`: a slot for the item; a function call starts its block at once. */
  added(item: Json, outputIndex: unknown): void {
    this.open(item, outputIndex);
  }

  private open(item: Json, outputIndex: unknown): Slot | undefined {
    const kind = item.type;
    if (kind !== 'message' && kind !== 'reasoning' && kind !== 'function_call') return undefined; // web_search_call, …: not ours
    const slot: Slot = {
      kind,
      item,
      index: undefined,
      block: undefined,
      parser: undefined,
      part: undefined,
      parts: new Map(),
      ended: false,
    };
    this.slots.push(slot);
    if (typeof outputIndex === 'number') this.byKey.set(`#${outputIndex}`, slot);
    if (typeof item.id === 'string') this.byKey.set(item.id, slot);
    // A tool call starts at once: its name is known and consumers show it before its arguments.
    if (kind === 'function_call') {
      this.startBlock(slot);
      this.appendArguments(slot, str(item.arguments));
    }
    return slot;
  }

  /** `output_item.done`: emits whatever the deltas did not carry, then closes the block. */
  done(item: Json, outputIndex: unknown): void {
    const slot = this.find(item.id, outputIndex) ?? this.open(item, outputIndex);
    if (slot === undefined || slot.ended) return;
    slot.item = item;
    const parts = Array.isArray(item.content) ? item.content : [];
    if (slot.kind === 'function_call') {
      this.reconcileArguments(slot, item.arguments);
      const call = slot.block as ToolCall;
      if (call.name === '' && typeof item.name === 'string') call.name = item.name;
      if (call.signature === undefined && typeof item.id === 'string') call.signature = item.id;
    } else if (slot.kind === 'message') {
      for (const [i, part] of parts.entries()) {
        if (!isRecord(part)) continue;
        if (part.type === 'output_text') this.reconcile(slot, `c${i}`, str(part.text));
        else if (part.type === 'refusal' && !this.message.refusal) this.message.refusal = str(part.refusal);
      }
    } else {
      const summary = Array.isArray(item.summary) ? item.summary : [];
      for (const [i, part] of summary.entries()) if (isRecord(part)) this.reconcile(slot, `s${i}`, str(part.text));
      for (const [i, part] of parts.entries()) if (isRecord(part)) this.reconcile(slot, `c${i}`, str(part.text));
      // Encrypted reasoning with no readable text still becomes a (redacted) block: it must go back.
      if (slot.block === undefined && typeof item.encrypted_content === 'string' && item.encrypted_content !== '') this.startBlock(slot);
    }
    this.end(slot);
  }

  /** Streamed text of one part (`c0`, `s1`, …) of a message or reasoning item. */
  text(ev: Json, kind: 'message' | 'reasoning', part: string, delta: string): void {
    this.append(this.slotOf(ev, kind), part, delta);
  }

  /** The full text of one part (`.done`): emits what the deltas did not carry. */
  textDone(ev: Json, kind: 'message' | 'reasoning', part: string, full: string): void {
    this.reconcile(this.slotOf(ev, kind), part, full);
  }

  /** Streamed function call arguments. */
  arguments(ev: Json, delta: string): void {
    this.appendArguments(this.slotOf(ev, 'function_call'), delta);
  }

  /** The full arguments of a call (`.done`): LM Studio sends them only here, OpenAI repeats the deltas. */
  argumentsDone(ev: Json, full: unknown): void {
    this.reconcileArguments(this.slotOf(ev, 'function_call'), full);
  }

  /** True when no output item was seen. */
  get isEmpty(): boolean {
    return this.slots.length === 0;
  }

  /** True when the output has a function call. */
  get hasToolCalls(): boolean {
    return this.slots.some((slot) => slot.kind === 'function_call');
  }

  /** Closes every block still open (a server that skipped `output_item.done`). */
  closeAll(): void {
    for (const slot of this.slots) this.end(slot);
  }

  /** On a failure: every call's arguments as far as they arrived (its block stays open). */
  settleArguments(): void {
    for (const slot of this.slots) if (slot.parser !== undefined) (slot.block as ToolCall).arguments = parseArguments(slot);
  }

  /** The slot an event belongs to, by `output_index` then `item_id`; made up when the server skipped `output_item.added`. */
  private slotOf(ev: Json, kind: Slot['kind']): Slot {
    return this.find(ev.item_id, ev.output_index) ?? (this.open({ type: kind, id: ev.item_id }, ev.output_index) as Slot);
  }

  private find(itemId: unknown, outputIndex: unknown): Slot | undefined {
    return (
      (typeof outputIndex === 'number' ? this.byKey.get(`#${outputIndex}`) : undefined) ??
      (typeof itemId === 'string' ? this.byKey.get(itemId) : undefined)
    );
  }

  private startBlock(slot: Slot): void {
    if (slot.block !== undefined) return;
    const at = this.message.content.length;
    if (slot.kind === 'function_call') {
      const call: ToolCall = {
        type: 'tool_call',
        id: this.uniqueId(slot.item.call_id),
        name: str(slot.item.name),
        arguments: {},
        rawArguments: '',
      };
      if (typeof slot.item.id === 'string' && slot.item.id !== '') call.signature = slot.item.id;
      slot.block = call;
      slot.parser = new PartialJsonParser();
      this.out.push({ type: 'tool_call_start', index: at, id: call.id, name: call.name });
    } else if (slot.kind === 'message') {
      slot.block = { type: 'text', text: '' };
      this.out.push({ type: 'text_start', index: at });
    } else {
      slot.block = { type: 'thinking', thinking: '' };
      this.out.push({ type: 'thinking_start', index: at });
    }
    slot.index = at;
    this.message.content.push(slot.block);
  }

  /** Appends streamed text of part `part` to the slot's text or thinking block. */
  private append(slot: Slot, part: string, delta: string): void {
    if (delta === '' || slot.ended || slot.kind === 'function_call') return;
    this.startBlock(slot);
    const block = slot.block as TextContent | ThinkingContent;
    if (slot.part !== part) {
      // Reasoning summary parts are separate paragraphs; the parts of a message run on.
      if (slot.kind === 'reasoning' && slot.part !== undefined && (block as ThinkingContent).thinking !== '') this.emit(slot, '\n\n');
      slot.part = part;
    }
    slot.parts.set(part, (slot.parts.get(part) ?? '') + delta);
    this.emit(slot, delta);
  }

  private emit(slot: Slot, delta: string): void {
    const index = slot.index as number;
    if (slot.block?.type === 'text') {
      slot.block.text += delta;
      this.out.push({ type: 'text_delta', index, delta });
    } else if (slot.block?.type === 'thinking') {
      slot.block.thinking += delta;
      this.out.push({ type: 'thinking_delta', index, delta });
    }
  }

  /** A part's full text arrived (`.done`): emit what the deltas did not carry. */
  private reconcile(slot: Slot, part: string, full: string): void {
    const streamed = slot.parts.get(part) ?? '';
    if (full.length > streamed.length && full.startsWith(streamed)) this.append(slot, part, full.slice(streamed.length));
  }

  private appendArguments(slot: Slot, delta: string): void {
    if (delta === '' || slot.ended || slot.kind !== 'function_call') return;
    const call = slot.block as ToolCall;
    const parser = slot.parser as PartialJsonParser;
    call.rawArguments += delta;
    parser.push(delta);
    this.out.push({ type: 'tool_call_delta', index: slot.index as number, delta, partialArguments: parser.value });
  }

  private reconcileArguments(slot: Slot, full: unknown): void {
    if (typeof full !== 'string' || slot.kind !== 'function_call') return;
    const raw = (slot.block as ToolCall).rawArguments;
    if (full.length > raw.length && full.startsWith(raw)) this.appendArguments(slot, full.slice(raw.length));
  }

  /** Closes the slot's block (once): final arguments, signatures, the `*_end` event. */
  private end(slot: Slot): void {
    if (slot.ended) return;
    slot.ended = true;
    const block = slot.block;
    if (block === undefined) return; // an item that never had content (an empty reasoning item)
    const index = slot.index as number;
    if (block.type === 'tool_call') {
      slot.parser?.end();
      block.arguments = parseArguments(slot);
      this.out.push({ type: 'tool_call_end', index, toolCall: block });
    } else if (block.type === 'text') {
      if (typeof slot.item.id === 'string' && slot.item.id !== '') {
        const ref: Json = { id: slot.item.id };
        if (typeof slot.item.phase === 'string') ref.phase = slot.item.phase;
        block.signature = JSON.stringify(ref);
      }
      this.out.push({ type: 'text_end', index, text: block.text });
    } else {
      block.signature = JSON.stringify(slot.item);
      const encrypted = typeof slot.item.encrypted_content === 'string' && slot.item.encrypted_content !== '';
      if (encrypted && block.thinking === '') block.redacted = true;
      this.out.push({ type: 'thinking_end', index, thinking: block.thinking });
    }
  }

  /** The server's call_id, unless it is missing or already used (in this response or the run). */
  private uniqueId(id: unknown): string {
    let unique = typeof id === 'string' && id !== '' && !this.callIds.has(id) && this.runIds?.has(id) !== true ? id : undefined;
    unique ??= `call_${randomUUID().replace(/-/g, '').slice(0, 24)}`;
    this.callIds.add(unique);
    return unique;
  }
}

/** The final arguments: the parsed object, or `{}` when the text is not a JSON object. */
function parseArguments(slot: Slot): Record<string, unknown> {
  const parser = slot.parser as PartialJsonParser;
  const raw = (slot.block as ToolCall).rawArguments;
  if (parser.done && !parser.failed && raw.length <= MAX_ARGUMENT_CHARS) return isRecord(parser.value) ? parser.value : {};
  return parseArgumentObject(raw);
}

/** A string member, or `''`. */
export function str(value: unknown): string {
  return typeof value === 'string' ? value : '';
}

/** A number member, or 0. */
export function num(value: unknown): number {
  return typeof value === 'number' ? value : 0;
}
