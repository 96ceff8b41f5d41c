import { describe, expect, it } from 'vitest';
import { createToolOutputTool, ToolOutputArchive, type ToolOutputLookup } from '../../src/context/tool-output.js';
import type { RunEvent } from '../../src/events.js';
import type { ImageContent, TextContent, ToolCall, ToolResultMessage } from '../../src/model/types.js';
import { text as say, toolCall, type ScriptFunction } from '../../src/testing/index.js';
import { MemoryRunStore } from '../../src/store/memory.js';
import { defineTool } from '../../src/tools/define.js';
import { createDispatcher } from '../../src/tools/dispatch.js';
import { ToolRegistry } from '../../src/tools/registry.js';
import { fullOutputOf } from '../../src/tools/truncate.js';
import type { DispatcherOptions, Tool, ToolOutput } from '../../src/tools/types.js';
import { collect, setup as setupAgent } from '../loop/helpers.js';

let calls = 0;
function call(name: string, args: Record<string, unknown> = {}, id = `call_${++calls}`): ToolCall {
  return { type: 'tool_call', id, name, arguments: args, rawArguments: JSON.stringify(args) };
}
const ctx = (runId = 'run-1') => ({ signal: new AbortController().signal, runId, idempotencyKey: `${runId}:0:0` });
const textOf = (result: ToolResultMessage): string => result.content.map((p) => (p.type === 'text' ? p.text : `<image>`)).join('');

function outputTool(output: () => ToolOutput): Tool {
  return defineTool({ name: 'dump', description: 'Dump a lot.', parameters: { type: 'object', properties: {} }, execute: output });
}

/** A dispatcher over `tool`, plus `read_tool_output` reading from a map filled by afterToolCall. */
function pagingSetup(tool: Tool, options: DispatcherOptions & { maxPageChars?: number } = {}) {
  const outputs = new Map<string, string>();
  const lookup: ToolOutputLookup = (id) => outputs.get(id);
  const reader = createToolOutputTool(lookup, options.maxPageChars === undefined ? {} : { maxPageChars: options.maxPageChars });
  const dispatcher = createDispatcher(new ToolRegistry([tool, reader]), {
    ...options,
    afterToolCall: (_call, result) => {
      const full = fullOutputOf(result);
      if (full !== undefined) outputs.set(result.toolCallId, full);
    },
  });
  const read = async (args: Record<string, unknown>) => (await dispatcher.dispatch(call('read_tool_output', args), ctx())).result;
  return { dispatcher, read, outputs };
}

/** Reads a call's whole output page by page, following each answer's next offset. */
async function readAll(read: (args: Record<string, unknown>) => Promise<ToolResultMessage>, id: string, maxPage: number) {
  let offset = 0;
  let text = '';
  let pages = 0;
  for (;;) {
    const page = await read({ tool_call_id: id, offset });
    expect(page.isError).toBe(false);
    const details = page.details as { offset: number; end: number; total: number; nextOffset?: number };
    const body = textOf(page).split('\n').slice(1, -1).join('\n');
    expect(body.length).toBe(details.end - details.offset);
    expect(body.length).toBeLessThanOrEqual(maxPage);
    // No half of a surrogate pair at either end of a page.
    expect(body).not.toMatch(/^[\udc00-\udfff]|[\ud800-\udbff]$/);
    text += body;
    pages++;
    if (details.nextOffset === undefined) {
      expect(textOf(page).endsWith('[end of output]')).toBe(true);
      return { text, pages };
    }
    expect(textOf(page)).toContain(
      `characters remain: call read_tool_output with tool_call_id "${id}" and offset ${details.nextOffset} to continue]`,
    );
    offset = details.nextOffset;
  }
}

describe('cutting a long result', () => {
  it('sends head and tail with a marker naming read_tool_output, and keeps the full text in details', async () => {
    const full = 'H'.repeat(40_000) + 'M'.repeat(8_213) + 'T'.repeat(16_000);
    const { dispatcher } = pagingSetup(outputTool(() => full));
    const { result } = await dispatcher.dispatch(call('dump', {}, 'call_1'), ctx());
    expect(textOf(result)).toBe(
      `${'H'.repeat(8_000)}\n… [truncated: 48,213 of 64,213 characters removed; call read_tool_output with tool_call_id "call_1" and offset 8000 to read more] …\n${'T'.repeat(8_000)}`,
    );
    expect(result.details).toEqual({ fullOutput: { text: full, chars: 64_213 } });
    expect(fullOutputOf(result)).toBe(full);
  });

  it('without read_tool_output the marker only counts, and the full text is still kept', async () => {
    const full = 'a'.repeat(500) + 'b'.repeat(500);
    const dispatcher = createDispatcher(new ToolRegistry([outputTool(() => full)]), { maxOutputChars: 100 });
    const { result } = await dispatcher.dispatch(call('dump'), ctx());
    expect(textOf(result)).toBe(`${'a'.repeat(50)}\n… [truncated: 900 of 1,000 characters removed] …\n${'b'.repeat(50)}`);
    expect(fullOutputOf(result)).toBe(full);
  });

  it('adds nothing to a result within the limit', async () => {
    const { dispatcher } = pagingSetup(outputTool(() => ({ content: 'short', details: { n: 1 } })));
    const { result } = await dispatcher.dispatch(call('dump'), ctx());
    expect(result.details).toEqual({ n: 1 });
    expect(textOf(result)).toBe('short');
  });

  it("keeps a tool's own details beside the full output (an object's fields, any other value under `value`)", async () => {
    const long = 'x'.repeat(20_000);
    const object = await pagingSetup(outputTool(() => ({ content: long, details: { exitCode: 1 } }))).dispatcher.dispatch(
      call('dump'),
      ctx(),
    );
    expect(object.result.details).toEqual({ exitCode: 1, fullOutput: { text: long, chars: 20_000 } });
    const array = await pagingSetup(outputTool(() => ({ content: long, details: [1, 2] }))).dispatcher.dispatch(call('dump'), ctx());
    expect(array.result.details).toEqual({ value: [1, 2], fullOutput: { text: long, chars: 20_000 } });
  });

  it('leaves images untouched and points each text part at its own place in the full text', async () => {
    const image: ImageContent = { type: 'image', data: 'iVBORw0KGgo=', mimeType: 'image/png' };
    const first = 'a'.repeat(3_000) + 'A'.repeat(3_000);
    const second = 'b'.repeat(1_000) + 'B'.repeat(1_000);
    const content: Array<TextContent | ImageContent> = [{ type: 'text', text: first }, image, { type: 'text', text: second }];
    const { dispatcher } = pagingSetup(
      outputTool(() => ({ content })),
      { maxOutputChars: 800 },
    );
    const { result } = await dispatcher.dispatch(call('dump', {}, 'call_img'), ctx());
    expect(result.content[1]).toBe(image);
    const full = fullOutputOf(result) as string;
    expect(full).toBe(`${first}\n${second}`);
    for (const part of [result.content[0], result.content[2]]) {
      const marker = /truncated: ([\d,]+) of [\d,]+ characters removed; .* and offset (\d+) to read more/.exec((part as TextContent).text);
      expect(marker).not.toBeNull();
      const [head, tail] = (part as TextContent).text.split(/\n… \[.*\] …\n/) as [string, string];
      const offset = Number(marker![2]);
      const removed = Number(marker![1]!.replaceAll(',', ''));
      // In the full text, the head the model saw ends at the offset and its tail follows the removed part.
      expect(full.slice(offset - head.length, offset)).toBe(head);
      expect(full.slice(offset + removed, offset + removed + tail.length)).toBe(tail);
      expect(full[offset + removed + tail.length] ?? '\n').toBe('\n');
    }
  });
});

describe('read_tool_output', () => {
  it('pages a 2 MB output to the end: the pages add up to the whole text', async () => {
    const lines = Array.from({ length: 40_000 }, (_, i) => `line ${i}: ${'log '.repeat(10)}`);
    const full = lines.join('\n');
    expect(full.length).toBeGreaterThan(2_000_000);
    const { dispatcher, read } = pagingSetup(outputTool(() => full));
    await dispatcher.dispatch(call('dump', {}, 'big'), ctx());
    const { text, pages } = await readAll(read, 'big', 8_000);
    expect(text).toBe(full);
    expect(pages).toBeGreaterThan(250);
  });

  it('never splits a character: multibyte text pages back exactly', async () => {
    const full = Array.from({ length: 3_000 }, (_, i) => `${i % 7 === 0 ? '\n' : ''}日本語😀é${i}`).join('');
    const { dispatcher, read } = pagingSetup(
      outputTool(() => full),
      { maxOutputChars: 1_000, maxPageChars: 333 },
    );
    await dispatcher.dispatch(call('dump', {}, 'mb'), ctx());
    const { text } = await readAll(read, 'mb', 333);
    expect(text).toBe(full);
    // A page asked to start inside a surrogate pair starts at the whole character.
    const inside = full.indexOf('😀') + 1;
    const page = await read({ tool_call_id: 'mb', offset: inside, limit: 1 });
    expect(page.details).toMatchObject({ offset: inside - 1, end: inside + 1 });
    expect(textOf(page)).toContain('\n😀\n');
    // A one-character page never comes back empty before the end.
    for (let offset = 0; offset < 40; ) {
      const next = ((await read({ tool_call_id: 'mb', offset, limit: 1 })).details as { end: number }).end;
      expect(next).toBeGreaterThan(offset);
      offset = next;
    }
  });

  it('ends a page after a line break near its end, and honours limit', async () => {
    const full = Array.from({ length: 300 }, (_, i) => `row ${String(i).padStart(3, '0')} ${'.'.repeat(90)}`).join('\n');
    const { dispatcher, read } = pagingSetup(outputTool(() => full));
    await dispatcher.dispatch(call('dump', {}, 'rows'), ctx());
    const page = await read({ tool_call_id: 'rows', offset: 0, limit: 1_000 });
    const body = textOf(page).split('\n').slice(1, -1);
    expect(body.at(-1)).toBe(''); // the page ends right after a line break
    expect(body.slice(0, -1).every((l) => /^row \d{3} \.{90}$/.test(l))).toBe(true);
    expect(body).toHaveLength(11);
    expect(page.details).toMatchObject({ offset: 0, end: 990, total: full.length, nextOffset: 990 });
  });

  it('caps limit at the page size', async () => {
    const full = 'z'.repeat(50_000);
    const { dispatcher, read } = pagingSetup(
      outputTool(() => full),
      { maxPageChars: 2_000 },
    );
    await dispatcher.dispatch(call('dump', {}, 'zz'), ctx());
    const page = await read({ tool_call_id: 'zz', offset: 10_000, limit: 30_000 });
    expect(page.details).toMatchObject({ offset: 10_000, end: 12_000, nextOffset: 12_000 });
    expect(textOf(page)).toContain('[38,000 characters remain');
  });

  it('answers an unknown id with an error that says where ids come from', async () => {
    const { read } = pagingSetup(outputTool(() => 'x'));
    const page = await read({ tool_call_id: 'nope' });
    expect(page.isError).toBe(true);
    expect(textOf(page)).toMatch(/no stored output for tool_call_id "nope".*Copy the tool_call_id from that marker/);
  });

  it('answers an offset past the end with the length', async () => {
    const { dispatcher, read } = pagingSetup(outputTool(() => 'q'.repeat(20_000)));
    await dispatcher.dispatch(call('dump', {}, 'q'), ctx());
    const page = await read({ tool_call_id: 'q', offset: 20_001 });
    expect(page.isError).toBe(true);
    expect(textOf(page)).toContain('offset 20001 is past the end: the output of "q" has 20,000 characters');
    const atEnd = await read({ tool_call_id: 'q', offset: 20_000 });
    expect(textOf(atEnd)).toMatch(/characters 20000 to 20000 of 20,000\]\n\n\[end of output\]$/);
  });

  it('finds the lines containing a text, with offsets to read them at', async () => {
    const lines = Array.from({ length: 5_000 }, (_, i) => (i % 1_000 === 999 ? `ERROR at step ${i}` : `ok step ${i}`));
    const full = lines.join('\n');
    const { dispatcher, read } = pagingSetup(outputTool(() => full));
    await dispatcher.dispatch(call('dump', {}, 'log'), ctx());
    const found = textOf(await read({ tool_call_id: 'log', find: 'error' }));
    const offsets = [...found.matchAll(/^offset (\d+): (.*)$/gm)].map((m) => [Number(m[1]), m[2]] as const);
    expect(offsets.map(([, line]) => line)).toEqual([
      'ERROR at step 999',
      'ERROR at step 1999',
      'ERROR at step 2999',
      'ERROR at step 3999',
      'ERROR at step 4999',
    ]);
    const [offset] = offsets[2]!;
    const page = await read({ tool_call_id: 'log', offset, limit: 18 });
    expect(textOf(page).split('\n')[1]).toBe('ERROR at step 2999');
    const later = textOf(await read({ tool_call_id: 'log', find: 'ERROR', offset: offsets[3]![0] }));
    expect([...later.matchAll(/^offset /gm)]).toHaveLength(2);
    expect(textOf(await read({ tool_call_id: 'log', find: 'panic' }))).toMatch(/^No line contains "panic"/);
  });
});

describe('ToolOutputArchive', () => {
  const cut = (toolCallId: string, text: string): ToolResultMessage => ({
    role: 'tool',
    toolCallId,
    toolName: 'dump',
    content: [{ type: 'text', text: text.slice(0, 10) }],
    isError: false,
    details: { fullOutput: { text, chars: text.length } },
  });

  it('keeps cut outputs by run and call, ignoring results that were not cut', () => {
    const archive = new ToolOutputArchive();
    archive.record('r1', cut('c1', 'one'));
    archive.record('r1', { role: 'tool', toolCallId: 'c2', toolName: 'dump', content: [{ type: 'text', text: 'whole' }], isError: false });
    expect(archive.lookup('r1', 'c1')).toBe('one');
    expect(archive.lookup('r1', 'c2')).toBeUndefined();
    expect(archive.chars).toBe(3);
  });

  it('lets the oldest outputs go beyond its budget', () => {
    const archive = new ToolOutputArchive({ maxChars: 10 });
    archive.record('r', cut('a', 'aaaa'));
    archive.record('r', cut('b', 'bbbb'));
    archive.record('r', cut('c', 'cccc'));
    archive.record('r', cut('huge', 'h'.repeat(11)));
    expect([archive.lookup('r', 'a'), archive.lookup('r', 'b'), archive.lookup('r', 'c'), archive.lookup('r', 'huge')]).toEqual([
      undefined,
      'bbbb',
      'cccc',
      undefined,
    ]);
    expect(archive.chars).toBe(8);
    archive.forget('r');
    expect(archive.chars).toBe(0);
  });

  it("finds a call of an earlier run (a chat continuing its history) and records a history's results", () => {
    const archive = new ToolOutputArchive();
    archive.recordMessages('first', [{ role: 'user', content: 'hi' }, cut('c9', 'earlier output')]);
    expect(archive.lookup('second', 'c9')).toBe('earlier output');
  });

  it('reads a stored run when the output is not in memory, and keeps it for the next page', async () => {
    const store = new MemoryRunStore();
    await store.createRun({ id: 'r', model: 'x/y', config: {}, configHash: 'h' });
    const big = '✓'.repeat(100_000);
    const finished = {
      type: 'tool_finished',
      runId: 'r',
      seq: 0,
      at: 1,
      step: 1,
      toolCallId: 'c1',
      name: 'dump',
      result: cut('c1', big),
      durationMs: 1,
    } as RunEvent;
    await store.append('r', 0, [finished]);
    const archive = new ToolOutputArchive({ store });
    expect(await archive.lookup('r', 'c1')).toBe(big);
    expect(archive.chars).toBe(100_000);
    expect(await archive.lookup('r', 'other')).toBeUndefined();
    expect(await archive.lookup('no-such-run', 'c7')).toBeUndefined();
  });

  it('an output over the whole budget is read from the store once, then kept besides it while paged', async () => {
    const store = new MemoryRunStore();
    await store.createRun({ id: 'r', model: 'x/y', config: {}, configHash: 'h' });
    const huge = 'x'.repeat(50);
    const finished = (id: string, text: string) =>
      ({
        type: 'tool_finished',
        runId: 'r',
        seq: 0,
        at: 1,
        step: 1,
        toolCallId: id,
        name: 'dump',
        result: cut(id, text),
        durationMs: 1,
      }) as RunEvent;
    await store.append('r', 0, [finished('c1', huge), { ...finished('c2', 'y'.repeat(60)), seq: 1 }]);
    let loads = 0;
    const archive = new ToolOutputArchive({
      maxChars: 10,
      store: { loadEvents: (runId, from) => (loads++, store.loadEvents(runId, from)) },
    });
    for (let page = 0; page < 3; page++) expect(await archive.lookup('r', 'c1')).toBe(huge);
    expect(loads).toBe(1);
    expect(archive.chars).toBe(0);
    // Only the last one read is kept.
    expect(await archive.lookup('r', 'c2')).toBe('y'.repeat(60));
    expect(await archive.lookup('r', 'c1')).toBe(huge);
    expect(loads).toBe(3);
    archive.forget('r');
    expect(await archive.lookup('r', 'c1')).toBe(huge);
    expect(loads).toBe(4);
  });

  it('recordEvent keeps tool_finished outputs only', () => {
    const archive = new ToolOutputArchive();
    archive.recordEvent({
      type: 'tool_finished',
      runId: 'r',
      seq: 3,
      at: 1,
      step: 1,
      toolCallId: 'c1',
      name: 'dump',
      result: cut('c1', 'full'),
      durationMs: 1,
    });
    archive.recordEvent({ type: 'state_changed', runId: 'r', seq: 4, at: 1, from: 'idle', to: 'planning', step: 0 });
    expect(archive.lookup('r', 'c1')).toBe('full');
  });
});

describe('through a real agent', () => {
  it('the model sees the marker, the log keeps the whole output, and read_tool_output returns the next page', async () => {
    const full = Array.from({ length: 2_000 }, (_, i) => `entry ${String(i).padStart(4, '0')} ${'#'.repeat(38)}`).join('\n');
    expect(full.length).toBe(100_000 - 1);
    const big = defineTool({
      name: 'big',
      description: 'Prints a large report.',
      parameters: { type: 'object', properties: {} },
      execute: () => full,
    });
    const store = new MemoryRunStore();
    const archive = new ToolOutputArchive({ store });
    const reader = createToolOutputTool((id, { runId }) => archive.lookup(runId, id));
    let marker: RegExpExecArray | null = null;
    let page = '';
    const script: ScriptFunction = (request, info) => {
      if (info.index === 0) return toolCall('big', {}, 'call_big');
      const last = request.messages.at(-1);
      if (info.index === 1) {
        marker =
          /\[truncated: ([\d,]+) of 99,999 characters removed; call read_tool_output with tool_call_id "call_big" and offset (\d+) to read more\]/.exec(
            last?.content ?? '',
          );
        if (!marker) return say('no marker');
        return toolCall('read_tool_output', { tool_call_id: 'call_big', offset: Number(marker[2]) }, 'call_read');
      }
      page = last?.content ?? '';
      return say('done');
    };
    const { server, agent } = await setupAgent(script, { tools: [big, reader], store });
    const { events, result } = await collect(agent.run('summarize the report'));
    expect(result.reason).toBe('final_answer');
    expect(marker).not.toBeNull();

    // The second request carries the cut result, never the whole text.
    const sent = JSON.stringify(server.received[1]?.body);
    expect(sent).toContain('read_tool_output with tool_call_id');
    expect(sent).not.toContain('entry 1000');
    expect(sent.length).toBeLessThan(30_000);

    // The emitted and the stored tool_finished events keep the whole output.
    const emitted = events.find((e) => e.type === 'tool_finished' && e.toolCallId === 'call_big');
    const stored = (await store.loadEvents(result.runId)).find((e) => e.type === 'tool_finished' && e.toolCallId === 'call_big');
    for (const event of [emitted, stored]) expect(fullOutputOf((event as { result: ToolResultMessage }).result)).toBe(full);

    // The page starts exactly where the model's view stopped.
    const offset = Number(marker![2]);
    expect(page).toContain(`[output of tool call "call_big": characters ${offset} to `);
    expect(page.split('\n')[1]).toBe(full.slice(offset, full.indexOf('\n', offset)));
    const readFinished = events.find((e) => e.type === 'tool_finished' && e.toolCallId === 'call_read');
    expect((readFinished as { result: ToolResultMessage }).result.isError).toBe(false);
  });
});
