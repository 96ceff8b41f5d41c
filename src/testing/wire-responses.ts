/**
 * The OpenAI Responses wire (`POST /v1/responses`): named SSE events with a
 * `sequence_number` (`response.created`, `response.output_item.added/done` around reasoning
 * summaries, messages and function calls, `response.completed`) and `response` bodies, in
 * the shape of the recordings in `shared/fixtures/openai-responses/`.
 */
import { fakeSignature, pieces, type Answer } from './answer.js';
import { validateResponsesRequest } from './validate-responses.js';
import { responsesView } from './view.js';
import { chatWire, errorBody } from './wire-chat.js';
import { namedFrame, type WireFormat } from './wire-format.js';

type Json = Record<string, unknown>;

/** `incomplete_details.reason` of the finish reasons that leave a response incomplete. */
const INCOMPLETE: Record<string, string> = { length: 'max_output_tokens', content_filter: 'content_filter' };

function usage(answer: Answer): Json {
  const { tokens } = answer;
  return {
    input_tokens: tokens.prompt,
    input_tokens_details: { cached_tokens: tokens.cached },
    output_tokens: tokens.completion,
    output_tokens_details: { reasoning_tokens: tokens.reasoning },
    total_tokens: tokens.total,
  };
}

/** The `response` object, as `response.created` (no output yet) and the terminal event carry it. */
function responseObject(answer: Answer, body: Json, status: string, output: Json[], extra: Json = {}): Json {
  return {
    id: answer.id,
    object: 'response',
    created_at: answer.created,
    status,
    error: null,
    incomplete_details: null,
    instructions: body.instructions ?? null,
    max_output_tokens: body.max_output_tokens ?? null,
    model: answer.model,
    output,
    parallel_tool_calls: true,
    previous_response_id: null,
    store: body.store ?? true,
    tools: body.tools ?? [],
    usage: null,
    metadata: {},
    ...extra,
  };
}

/** The output items of an answer, complete, in the order the model produces them. */
function outputItems(answer: Answer, body: Json): Json[] {
  const { turn, calls, serial } = answer;
  const items: Json[] = [];
  if (turn.thinking) {
    const item: Json = { id: `rs_scripted_${serial}`, type: 'reasoning', summary: [{ type: 'summary_text', text: turn.thinking }] };
    // Stateless clients (`store: false`) ask for the reasoning back in encrypted form.
    if (Array.isArray(body.include) && body.include.includes('reasoning.encrypted_content')) {
      item.encrypted_content = fakeSignature('responses-reasoning', turn.thinking);
    }
    items.push(item);
  }
  if (turn.text) {
    items.push({
      id: `msg_scripted_${serial}`,
      type: 'message',
      status: 'completed',
      content: [{ type: 'output_text', annotations: [], text: turn.text }],
      role: 'assistant',
    });
  }
  calls.forEach((call, k) => {
    items.push({
      id: `fc_scripted_${serial}_${k}`,
      type: 'function_call',
      status: 'completed',
      arguments: call.arguments,
      call_id: call.id,
      name: call.name,
    });
  });
  return items;
}

/** The terminal status and its extra fields for the answer's finish reason. */
function ending(answer: Answer): { event: string; status: string; extra: Json } {
  const reason = answer.finishReason === null ? undefined : INCOMPLETE[answer.finishReason];
  if (reason === undefined) return { event: 'response.completed', status: 'completed', extra: { usage: usage(answer) } };
  return { event: 'response.incomplete', status: 'incomplete', extra: { incomplete_details: { reason }, usage: usage(answer) } };
}

function frames(answer: Answer, body: Json, chunkSize: number, streamError?: { message: string; code?: string }): string[] {
  const out: string[] = [];
  let sequence = 0;
  const send = (type: string, data: Json): void => {
    out.push(namedFrame(type, JSON.stringify({ type, sequence_number: sequence++, ...data })));
  };
  send('response.created', { response: responseObject(answer, body, 'in_progress', []) });
  send('response.in_progress', { response: responseObject(answer, body, 'in_progress', []) });
  const items = outputItems(answer, body);
  items.forEach((item, output_index) => {
    const item_id = item.id;
    if (item.type === 'reasoning') {
      const text = answer.turn.thinking ?? '';
      const opened: Json = { ...item, summary: [] };
      send('response.output_item.added', { output_index, item: opened });
      const at = { item_id, output_index, summary_index: 0 };
      send('response.reasoning_summary_part.added', { ...at, part: { type: 'summary_text', text: '' } });
      for (const delta of pieces(text, chunkSize)) send('response.reasoning_summary_text.delta', { ...at, delta });
      send('response.reasoning_summary_text.done', { ...at, text });
      send('response.reasoning_summary_part.done', { ...at, part: { type: 'summary_text', text } });
    } else if (item.type === 'message') {
      const text = answer.turn.text ?? '';
      send('response.output_item.added', { output_index, item: { ...item, status: 'in_progress', content: [] } });
      const at = { item_id, output_index, content_index: 0 };
      send('response.content_part.added', { ...at, part: { type: 'output_text', annotations: [], text: '' } });
      for (const delta of pieces(text, chunkSize)) send('response.output_text.delta', { ...at, delta });
      send('response.output_text.done', { ...at, text });
      send('response.content_part.done', { ...at, part: { type: 'output_text', annotations: [], text } });
    } else {
      const args = String(item.arguments);
      send('response.output_item.added', { output_index, item: { ...item, status: 'in_progress', arguments: '' } });
      for (const delta of pieces(args, chunkSize)) send('response.function_call_arguments.delta', { item_id, output_index, delta });
      send('response.function_call_arguments.done', { item_id, output_index, arguments: args });
    }
    send('response.output_item.done', { output_index, item });
  });
  if (streamError) {
    // As recorded: an `error` event, then `response.failed` carrying the same error.
    const code = streamError.code ?? 'server_error';
    send('error', { error: { type: code, code, message: streamError.message, param: null } });
    send('response.failed', { response: responseObject(answer, body, 'failed', items, { error: { code, message: streamError.message } }) });
    return out;
  }
  const end = ending(answer);
  send(end.event, { response: responseObject(answer, body, end.status, items, end.extra) });
  return out;
}

/** The OpenAI Responses wire, as the server drives it. */
export const responsesWire: WireFormat = {
  api: 'openai-responses',
  unparsable: chatWire.unparsable,
  scriptError: chatWire.scriptError,
  validate: (body) => validateResponsesRequest(body),
  model: (body) => body.model as string,
  streams: (body) => body.stream === true,
  view: (body) => responsesView(body),
  responseId: (n) => `resp_scripted_${n}`,
  callId: (n) => `call_${n}`,
  // The same account and server as Chat Completions: the same error bodies and headers.
  statusFault: chatWire.statusFault,
  failure: (fault) => ({ status: 500, body: errorBody(fault.message, 'server_error', fault.code ?? 'server_error') }),
  frames: (answer, body, options) => frames(answer, body, options.chunkSize, options.streamError),
  ending: () => '',
  json(answer, body) {
    const end = ending(answer);
    return JSON.stringify(responseObject(answer, body, end.status, outputItems(answer, body), end.extra));
  },
};
