/** Plain-`fetch` client helpers for the scripted server tests (no rein adapter on purpose). */

/** Wire JSON as the tests read it. `any`: tests poke into loosely shaped objects and assert on them. */
export type Wire = Record<string, any>;

/** A parsed SSE data frame: a chunk object, or the string `[DONE]`. */
export type Frame = Wire | '[DONE]';

export const USER = [{ role: 'user', content: 'hi' }];

/** POSTs a chat request; a string body is sent verbatim. */
export function post(url: string, body: unknown, init: RequestInit = {}): Promise<Response> {
  return fetch(`${url}/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: typeof body === 'string' ? body : JSON.stringify(body),
    ...init,
  });
}

/** Parses `data:` frames out of an SSE body. */
export function parseSse(text: string): Frame[] {
  const frames: Frame[] = [];
  for (const block of text.split('\n\n')) {
    const line = block.trim();
    if (!line.startsWith('data: ')) continue;
    const data = line.slice(6);
    frames.push(data === '[DONE]' ? '[DONE]' : (JSON.parse(data) as Record<string, unknown>));
  }
  return frames;
}

/** Streams a chat request and returns its frames. */
export async function streamChat(url: string, body: Record<string, unknown>): Promise<{ response: Response; frames: Frame[] }> {
  const response = await post(url, { model: 'm', messages: USER, stream: true, ...body });
  return { response, frames: parseSse(await response.text()) };
}

/** Reads a body until the server ends it; returns what arrived and the error, if the connection died. */
export async function readUntilEnd(response: Response): Promise<{ text: string; error: unknown }> {
  const reader = response.body!.getReader();
  const decoder = new TextDecoder();
  let text = '';
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return { text, error: undefined };
      text += decoder.decode(value, { stream: true });
    }
  } catch (error) {
    return { text, error };
  }
}

/** The chunk objects of a stream (without `[DONE]`). */
export function chunks(frames: Frame[]): Wire[] {
  return frames.filter((frame): frame is Wire => frame !== '[DONE]');
}

/** Folds the deltas of a stream into what a client would assemble. */
export function assemble(frames: Frame[]): {
  text: string;
  thinking: string;
  toolCalls: Array<{ id: string; name: string; arguments: string }>;
  finishReasons: unknown[];
} {
  let text = '';
  let thinking = '';
  const toolCalls: Array<{ id: string; name: string; arguments: string }> = [];
  const finishReasons: unknown[] = [];
  for (const chunk of chunks(frames)) {
    const choice = chunk.choices?.[0];
    if (!choice) continue;
    if ('finish_reason' in choice && choice.finish_reason !== null) finishReasons.push(choice.finish_reason);
    const delta = choice.delta;
    if (typeof delta.content === 'string') text += delta.content;
    if (typeof delta.reasoning_content === 'string') thinking += delta.reasoning_content;
    for (const call of delta.tool_calls ?? []) {
      const slot = (toolCalls[call.index] ??= { id: '', name: '', arguments: '' });
      if (call.id) slot.id = call.id;
      if (call.function?.name) slot.name = call.function.name;
      slot.arguments += call.function?.arguments ?? '';
    }
  }
  return { text, thinking, toolCalls, finishReasons };
}
