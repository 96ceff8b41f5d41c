/**
 * Large tool results, kept whole and paged. The dispatcher sends the model the head and
 * tail of a long result around a marker and keeps the whole text in the result's
 * `details.fullOutput` (stored with `tool_finished`, never sent to a model). This file
 * gives the model a way back to the rest: the `read_tool_output` tool, which pages through
 * that text, and a {@link ToolOutputArchive} the tool reads from (in memory per process,
 * bounded, falling back to the run's stored events).
 */
import { ReinError } from '../errors.js';
import type { RunEvent } from '../events.js';
import type { Message, ToolResultMessage } from '../model/types.js';
import type { RunStore } from '../store/types.js';
import { defineTool } from '../tools/define.js';
import { formatCount, fullOutputOf, isLowSurrogate, READ_TOOL_OUTPUT } from '../tools/truncate.js';
import type { Tool } from '../tools/types.js';

/** Finds the whole output of a call by its id; `undefined` when there is none. */
export type ToolOutputLookup = (
  toolCallId: string,
  ctx: { runId: string; signal: AbortSignal },
) => string | undefined | Promise<string | undefined>;

/** Options of {@link createToolOutputTool}. */
export interface ToolOutputToolOptions {
  /**
   * The most characters one page returns (default 8 000). Keep it below the dispatcher's
   * `maxOutputChars` (16 000), or the pages are cut in turn.
   */
  maxPageChars?: number;
}

/** Default of {@link ToolOutputToolOptions.maxPageChars}. */
export const DEFAULT_PAGE_CHARS = 8_000;

/** At most this many matching lines answer a `find`. */
const MAX_FOUND_LINES = 20;
/** A matching line longer than this is shown around the match only. */
const MAX_FOUND_LINE_CHARS = 200;

/**
 * The `read_tool_output` tool: pages through the whole output of a call whose result was
 * cut. Offsets and limits count characters (UTF-16 code units, as the marker does), so a
 * single 1 MB line (minified JSON) pages as well as a log; a page ends after a line break
 * when one is near its end, and never inside a surrogate pair. `find` lists the lines that
 * contain a text (case-insensitive) with their offsets, to jump to the part that matters.
 *
 * @example
 * const archive = new ToolOutputArchive({ store });
 * const readToolOutput = createToolOutputTool((id, { runId }) => archive.lookup(runId, id));
 * const agent = new Agent({ model, tools: [...tools, readToolOutput], store });
 */
export function createToolOutputTool(lookup: ToolOutputLookup, options: ToolOutputToolOptions = {}): Tool {
  const maxPage = Math.max(1, Math.floor(options.maxPageChars ?? DEFAULT_PAGE_CHARS));
  return defineTool({
    name: READ_TOOL_OUTPUT,
    description:
      'Read the part of an earlier tool result that was cut. When a result shows "[truncated: … call read_tool_output with ' +
      'tool_call_id … and offset …]", call this with that tool_call_id and offset to read on; each answer says the offset ' +
      `of the next page. Use "find" to list the lines containing a text, with their offsets. Pages hold up to ${maxPage} characters.`,
    parameters: {
      type: 'object',
      properties: {
        tool_call_id: { type: 'string', description: 'The id named in the truncation marker.' },
        offset: { type: 'integer', minimum: 0, default: 0, description: 'Character offset to start reading (or finding) at.' },
        limit: { type: 'integer', minimum: 1, description: `Characters to read (at most ${maxPage}, the default).` },
        find: {
          type: 'string',
          description: 'List the lines from offset on that contain this text (case-insensitive) instead of reading.',
        },
      },
      required: ['tool_call_id'],
      additionalProperties: false,
    },
    risk: 'read',
    effect: 'pure',
    execute: async (args, ctx) => {
      const id = String(args.tool_call_id);
      const text = await lookup(id, { runId: ctx.runId, signal: ctx.signal });
      if (text === undefined) {
        const problem = `there is no stored output for tool_call_id ${JSON.stringify(id)}`;
        return failed(`${problem}: only results cut with a "[truncated: …]" marker can be read. Copy the tool_call_id from that marker.`);
      }
      const offset = Number(args.offset ?? 0);
      if (offset > text.length) {
        return failed(
          `offset ${offset} is past the end: the output of ${JSON.stringify(id)} has ${formatCount(text.length)} characters. Use an offset from 0 to ${text.length}.`,
        );
      }
      if (typeof args.find === 'string') return findLines(id, text, offset, args.find);
      const limit = Math.min(maxPage, Number(args.limit ?? maxPage));
      return readPage(id, text, offset, limit);
    },
  });
}

/** One page of `text` from `offset`, with where the next one starts. */
function readPage(id: string, text: string, offset: number, limit: number) {
  const start = isLowSurrogate(text.charCodeAt(offset)) ? offset - 1 : offset;
  let end = Math.min(text.length, start + limit);
  if (end < text.length) {
    // End after a line break when one is in the last quarter of the page: pages then hold whole lines.
    const lineEnd = text.lastIndexOf('\n', end - 1);
    if (lineEnd >= start + Math.floor((limit * 3) / 4)) end = lineEnd + 1;
    // Never end inside a surrogate pair, and never return an empty page before the end.
    else if (isLowSurrogate(text.charCodeAt(end))) end = end - 1 > start ? end - 1 : end + 1;
  }
  const remaining = text.length - end;
  const head = `[output of tool call ${JSON.stringify(id)}: characters ${start} to ${end} of ${formatCount(text.length)}]`;
  const tail =
    remaining > 0
      ? `[${formatCount(remaining)} characters remain: call ${READ_TOOL_OUTPUT} with tool_call_id ${JSON.stringify(id)} and offset ${end} to continue]`
      : '[end of output]';
  const details: Record<string, unknown> = { toolCallId: id, offset: start, end, total: text.length };
  if (remaining > 0) details.nextOffset = end;
  return { content: `${head}\n${text.slice(start, end)}\n${tail}`, details };
}

/** The lines from `offset` on that contain `needle`, case-insensitively, with their offsets. */
function findLines(id: string, text: string, offset: number, needle: string) {
  if (needle === '') return failed('"find" is empty: give the text to look for, or leave "find" out to read a page.');
  const haystack = text.toLowerCase();
  const wanted = needle.toLowerCase();
  // Lower-casing can change a string's length (rarely: 'İ'); offsets then come from the original.
  const sameLength = haystack.length === text.length;
  const source = sameLength ? haystack : text;
  const target = sameLength ? wanted : needle;
  const lines: string[] = [];
  let at = source.indexOf(target, offset);
  let more = false;
  while (at !== -1) {
    if (lines.length === MAX_FOUND_LINES) {
      more = true;
      break;
    }
    const lineStart = at === 0 ? 0 : text.lastIndexOf('\n', at - 1) + 1;
    const nextBreak = text.indexOf('\n', at);
    const lineEnd = nextBreak === -1 ? text.length : nextBreak;
    lines.push(`offset ${lineStart}: ${excerpt(text, lineStart, lineEnd, at)}`);
    at = nextBreak === -1 ? -1 : source.indexOf(target, nextBreak + 1);
  }
  const where = `in the output of tool call ${JSON.stringify(id)} from offset ${offset}`;
  if (lines.length === 0) return `No line contains ${JSON.stringify(needle)} ${where} (${formatCount(text.length)} characters).`;
  const tail = more ? `\n[more matches follow: call ${READ_TOOL_OUTPUT} with find and an offset after the last one listed]` : '';
  return `Lines containing ${JSON.stringify(needle)} ${where}; read one with offset:\n${lines.join('\n')}${tail}`;
}

function excerpt(text: string, lineStart: number, lineEnd: number, match: number): string {
  if (lineEnd - lineStart <= MAX_FOUND_LINE_CHARS) return text.slice(lineStart, lineEnd);
  const from = Math.max(lineStart, match - MAX_FOUND_LINE_CHARS / 2);
  const to = Math.min(lineEnd, from + MAX_FOUND_LINE_CHARS);
  return `${from > lineStart ? '…' : ''}${text.slice(from, to)}${to < lineEnd ? '…' : ''}`;
}

function failed(text: string) {
  return { content: text, isError: true };
}

/** Options of a {@link ToolOutputArchive}. */
export interface ToolOutputArchiveOptions {
  /**
   * Total characters kept in memory across runs (default 8 000 000); the oldest go first.
   * One output larger than this, read back from the store, is kept besides (the last one
   * read), so paging through it does not reload the run's events for every page.
   */
  maxChars?: number;
  /** Where to look for outputs no longer (or never) in memory: the run's stored events. */
  store?: Pick<RunStore, 'loadEvents'>;
}

interface Entry {
  runId: string;
  toolCallId: string;
  text: string;
}

/**
 * The whole outputs of cut results, by run and call id: what `read_tool_output` reads. It
 * keeps references to the strings already in the results (no copy), bounded by total size,
 * oldest out first; a miss reads the run's stored `tool_finished` events when a store is
 * given, so paging works after a resume in another process too. One archive per agent.
 *
 * @example
 * const archive = new ToolOutputArchive({ store, maxChars: 4_000_000 });
 * // wherever run events are seen:
 * archive.recordEvent(event); // keeps the full output of each cut tool_finished result
 * const tool = createToolOutputTool((id, { runId }) => archive.lookup(runId, id));
 */
export class ToolOutputArchive {
  private readonly entries = new Map<string, Entry>();
  /** The latest key of each call id, for a chat run paging a result of an earlier run. */
  private readonly latestById = new Map<string, string>();
  private readonly maxChars: number;
  private readonly store: Pick<RunStore, 'loadEvents'> | undefined;
  private total = 0;
  /** The last output over the whole budget that was read from the store. */
  private oversized: Entry | undefined;

  constructor(options: ToolOutputArchiveOptions = {}) {
    this.maxChars = options.maxChars ?? 8_000_000;
    if (!(this.maxChars >= 0)) {
      throw new ReinError('config', 'fatal', `ToolOutputArchive maxChars must be a number ≥ 0, got ${String(options.maxChars)}`);
    }
    this.store = options.store;
  }

  /** Characters held in memory now. */
  get chars(): number {
    return this.total;
  }

  /** Keeps the full output of `result` when the dispatcher cut it; does nothing otherwise. */
  record(runId: string, result: ToolResultMessage): void {
    const text = fullOutputOf(result);
    if (text === undefined) return;
    const key = keyOf(runId, result.toolCallId);
    this.drop(key);
    // One output larger than the whole budget is left to the store.
    if (text.length > this.maxChars) return;
    this.entries.set(key, { runId, toolCallId: result.toolCallId, text });
    this.latestById.set(result.toolCallId, key);
    this.total += text.length;
    for (const [oldest] of this.entries) {
      if (this.total <= this.maxChars) break;
      this.drop(oldest);
    }
  }

  /** {@link record} for a run event: keeps the output of a `tool_finished`, ignores others. */
  recordEvent(event: RunEvent): void {
    if (event.type === 'tool_finished') this.record(event.runId, event.result);
  }

  /** {@link record} for every tool result of a history (a chat run continuing earlier turns). */
  recordMessages(runId: string, messages: readonly Message[]): void {
    for (const message of messages) if (message.role === 'tool') this.record(runId, message);
  }

  /**
   * The whole output of call `toolCallId`: of run `runId`, else of the latest run that had
   * such a call, else from the run's stored events. `undefined` when none is found.
   */
  lookup(runId: string, toolCallId: string): string | undefined | Promise<string | undefined> {
    const exact = this.entries.get(keyOf(runId, toolCallId));
    if (exact) return exact.text;
    const latest = this.latestById.get(toolCallId);
    const other = latest === undefined ? undefined : this.entries.get(latest);
    if (other) return other.text;
    const oversized = this.oversized;
    if (oversized && oversized.runId === runId && oversized.toolCallId === toolCallId) return oversized.text;
    return this.store ? this.fromStore(this.store, runId, toolCallId) : undefined;
  }

  /** Lets go of a run's outputs (the store still has them). */
  forget(runId: string): void {
    for (const [key, entry] of this.entries) if (entry.runId === runId) this.drop(key);
    if (this.oversized?.runId === runId) this.oversized = undefined;
  }

  private async fromStore(store: Pick<RunStore, 'loadEvents'>, runId: string, toolCallId: string): Promise<string | undefined> {
    let events: RunEvent[];
    try {
      events = await store.loadEvents(runId);
    } catch (error) {
      if (error instanceof ReinError && error.code === 'not_found') return undefined;
      throw error;
    }
    for (let i = events.length - 1; i >= 0; i--) {
      const event = events[i] as RunEvent;
      if (event.type !== 'tool_finished' || event.toolCallId !== toolCallId) continue;
      // Paging reads the same output again and again: keep it at hand.
      const text = fullOutputOf(event.result);
      if (text !== undefined && text.length > this.maxChars) this.oversized = { runId, toolCallId, text };
      else this.record(runId, event.result);
      return text;
    }
    return undefined;
  }

  private drop(key: string): void {
    const entry = this.entries.get(key);
    if (!entry) return;
    this.entries.delete(key);
    this.total -= entry.text.length;
    if (this.latestById.get(entry.toolCallId) === key) this.latestById.delete(entry.toolCallId);
  }
}

function keyOf(runId: string, toolCallId: string): string {
  return `${runId}\u0000${toolCallId}`;
}
