/**
 * Turning a recorded run into a deterministic test. `replayModel(events)` is a model that
 * answers with the recorded assistant messages, in order, so re-running the same agent on
 * it reproduces the run without a network; `firstDivergence(recorded, replayed)` compares
 * the two logs turn by turn and reports the first tool call, arguments or tool result that
 * differs (when the agent's code changed).
 */
import { ReinError } from '../errors.js';
import type { RunEvent } from '../events.js';
import { EventStream } from '../model/event-stream.js';
import { failedStream } from '../model/failed-stream.js';
import { FixturePlayer, playbackTransport, type Fixture, type FixtureDivergence } from '../model/fixture.js';
import { streamModel } from '../model/providers/index.js';
import { emptyUsage, toolResultText, type AssistantMessage, type AssistantStreamEvent, type StreamFunction } from '../model/types.js';
import { canonicalJson } from '../util/canonical-json.js';
import { isSummaryRequest, SUMMARY_HEADER } from '../context/summary.js';

/**
 * A model that replays the assistant messages of a recorded run, one per request. A request
 * past the end of the recording ends in a fatal error that says so.
 *
 * @example
 * const recorded = await store.loadEvents(runId);
 * const replay = new Agent({ ...sameOptions, streamFn: replayModel(recorded) });
 * const result = await replay.run(input);
 */
export function replayModel(events: readonly RunEvent[]): StreamFunction;
/**
 * A model that plays back a recording of a run's model exchanges (`rein run --record`,
 * `recordTo`; read it with `loadFixture`): each request goes through the model's own
 * adapter, is compared with the recorded one and answered with the recorded response, in
 * process. The first request that differs ends its stream with a fatal error saying where
 * (and is kept as `divergence`).
 *
 * @example
 * const model = replayModel(loadFixture('test/fixtures/refund.fixture.jsonl'));
 * const result = await new Agent({ ...sameOptions, streamFn: model }).run('Refund order 42');
 * expect(model.divergence).toBeUndefined();
 */
export function replayModel(fixture: Fixture): StreamFunction & { readonly divergence: FixtureDivergence | undefined };
export function replayModel(source: readonly RunEvent[] | Fixture): StreamFunction {
  if (!Array.isArray(source)) return playback(source as Fixture);
  const events = source as readonly RunEvent[];
  const answers = events.flatMap((e) =>
    e.type === 'assistant_message' && e.message.stopReason !== 'error' && e.message.stopReason !== 'aborted' ? [e.message] : [],
  );
  // A compaction's summary request is answered with the summary the run recorded, so it
  // does not use up one of the agent's answers.
  const summaries = events.flatMap((e) => (e.type === 'context_compacted' ? [e] : []));
  let nextSummary = 0;
  let next = 0;
  return (model, context) => {
    const out = new EventStream<AssistantStreamEvent, AssistantMessage>();
    if (isSummaryRequest(context)) {
      const summary = summaries[nextSummary++];
      if (!summary || summary.summarizer === 'mechanical') {
        // The run wrote this summary itself: failing the request makes the replay do so too.
        return failedStream(
          model,
          new ReinError('invalid_response', 'fatal', 'the recording has no model-written summary for this compaction'),
        );
      }
      const text = String(summary.summary.content).slice(SUMMARY_HEADER.length).trim();
      const message: AssistantMessage = {
        role: 'assistant',
        content: [{ type: 'text', text }],
        stopReason: 'stop',
        usage: summary.usage ?? emptyUsage(),
        provider: model.provider,
        model: model.id,
      };
      out.push({ type: 'done', message });
      out.end(message);
      return out;
    }
    const recorded = answers[next++];
    if (!recorded) {
      return failedStream(
        model,
        new ReinError(
          'invalid_response',
          'fatal',
          `the replayed run asked the model ${next} times; the recording has ${answers.length} answers`,
        ),
      );
    }
    const message = structuredClone(recorded);
    out.push({ type: 'start', provider: message.provider, model: message.model });
    message.content.forEach((block, index) => {
      if (block.type === 'text') {
        out.push({ type: 'text_start', index });
        out.push({ type: 'text_delta', index, delta: block.text });
        out.push({ type: 'text_end', index, text: block.text });
      } else if (block.type === 'thinking') {
        out.push({ type: 'thinking_start', index });
        out.push({ type: 'thinking_delta', index, delta: block.thinking });
        out.push({ type: 'thinking_end', index, thinking: block.thinking });
      } else {
        out.push({ type: 'tool_call_start', index, id: block.id, name: block.name });
        out.push({ type: 'tool_call_delta', index, delta: block.rawArguments, partialArguments: block.arguments });
        out.push({ type: 'tool_call_end', index, toolCall: block });
      }
    });
    out.push({ type: 'done', message });
    out.end(message);
    return out;
  };
}

function playback(fixture: Fixture): StreamFunction & { readonly divergence: FixtureDivergence | undefined } {
  const player = new FixturePlayer(fixture);
  const transport = playbackTransport(player);
  const stream: StreamFunction = (model, context, options) => streamModel(model, context, { ...options, transport });
  return Object.defineProperty(stream, 'divergence', { get: () => player.divergence }) as StreamFunction & {
    readonly divergence: FixtureDivergence | undefined;
  };
}

/** Where a replayed run first differs from its recording. */
export interface Divergence {
  /** Which kind of step differs. */
  kind: 'tool_call' | 'tool_result' | 'length';
  /** The seq of the differing event in each log (absent when one log ended first). */
  recordedSeq?: number;
  replayedSeq?: number;
  expected: string;
  actual: string;
}

/** The first tool call, arguments or tool result that differs, or `undefined` when none does. */
export function firstDivergence(recorded: readonly RunEvent[], replayed: readonly RunEvent[]): Divergence | undefined {
  const a = steps(recorded);
  const b = steps(replayed);
  for (let i = 0; i < Math.max(a.length, b.length); i++) {
    const x = a[i];
    const y = b[i];
    if (!x || !y) {
      return {
        kind: 'length',
        ...(x ? { recordedSeq: x.seq } : {}),
        ...(y ? { replayedSeq: y.seq } : {}),
        expected: x ? x.text : '(the recording ends here)',
        actual: y ? y.text : '(the replay ends here)',
      };
    }
    if (x.kind !== y.kind || x.text !== y.text)
      return { kind: x.kind, recordedSeq: x.seq, replayedSeq: y.seq, expected: x.text, actual: y.text };
  }
  return undefined;
}

interface Step {
  kind: 'tool_call' | 'tool_result';
  seq: number;
  text: string;
}

function steps(events: readonly RunEvent[]): Step[] {
  const out: Step[] = [];
  for (const e of events) {
    if (e.type === 'tool_started') out.push({ kind: 'tool_call', seq: e.seq, text: `${e.name} ${canonicalJson(e.arguments)}` });
    else if (e.type === 'tool_finished') {
      const text = toolResultText(e.result.content);
      out.push({ kind: 'tool_result', seq: e.seq, text: `${e.name}${e.result.isError ? ' (error)' : ''}: ${text}` });
    }
  }
  return out;
}
