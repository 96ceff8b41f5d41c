/**
 * `elicitation/create`: a server asks the person for something — a form of primitive
 * fields (form mode) or to open a URL (URL mode). The host's `elicit` hook asks; rein fills
 * in the schema's defaults before asking, checks an accepted form against the requested
 * schema (with the same validator as tool arguments) and reports each elicitation as an
 * `mcp_elicitation` event, without the values typed. With no hook, the question of a run's
 * tool call pauses the run durably (see `run-calls.ts` and the loop's `call-questions.ts`).
 */
import type { ElicitRequest, ElicitResult } from '@modelcontextprotocol/sdk/types.js';
import type { JsonSchema } from '../model/types.js';
import { compileValidator } from '../tools/validate.js';
import { pauseCallFor, takeCallAnswer, type CallQuestion } from '../tools/call-side-channel.js';
import { elicitationHash, type RunCall } from './run-calls.js';
import type { Sdk } from './sdk.js';
import type { McpElicitRequest, McpElicitResult, McpEvent } from './types.js';

/** JSON-RPC "invalid params". */
const INVALID_PARAMS = -32602;

/** Who answers one server's elicitations. */
export interface ElicitationAnswerers {
  server: string;
  /** The host's hook (a person at a terminal, a program). */
  elicit?: (request: McpElicitRequest) => Promise<McpElicitResult>;
  /** With no hook: a run's call the question belongs to pauses its run for the answer. */
  pause: boolean;
  /** The run's call in flight on the server, if exactly one is. */
  bound: () => RunCall | undefined;
  emit: (event: McpEvent) => void;
  sdk: Sdk;
}

/**
 * The request handler for one server. In order: the answer a person already gave to this
 * question for the bound run call (logged while its run was paused, handed back by the
 * resume that makes the call again); the `elicit` hook; or, with `pause`, the bound call
 * marked as waiting (the run pauses; the server is answered `cancel` and its call ended).
 */
export function elicitationHandler(
  answerers: ElicitationAnswerers,
): (request: ElicitRequest, extra: { signal: AbortSignal }) => Promise<ElicitResult> {
  const { server, elicit, emit, sdk } = answerers;
  return async (request, extra) => {
    const params = request.params as Record<string, unknown>;
    const mode = params.mode === 'url' ? 'url' : 'form';
    const message = typeof params.message === 'string' ? params.message : '';
    const asked: McpElicitRequest = { server, mode, message, signal: extra.signal };
    const schema = mode === 'form' ? (params.requestedSchema as McpElicitRequest['requestedSchema']) : undefined;
    if (schema) {
      asked.requestedSchema = schema;
      asked.defaults = defaultsOf(schema);
    }
    if (mode === 'url') {
      asked.url = String(params.url);
      if (typeof params.elicitationId === 'string') asked.elicitationId = params.elicitationId;
    }
    const report = (action: McpElicitResult['action'] | 'error' | 'paused', stored?: boolean): void =>
      emit({
        type: 'mcp_elicitation',
        server,
        mode,
        message,
        action,
        ...(asked.url !== undefined ? { url: asked.url } : {}),
        ...(stored ? { stored: true } : {}),
      });
    const call = answerers.bound();
    const requestHash = elicitationHash({ server, mode, message, requestedSchema: schema, url: asked.url });
    const stored = call ? takeCallAnswer(call.runId, call.toolCallId, requestHash) : undefined;
    let answer: McpElicitResult;
    if (stored) answer = stored.content === undefined ? { action: stored.action } : { action: stored.action, content: stored.content };
    else if (elicit) {
      try {
        answer = await elicit(asked);
      } catch (error) {
        report('error');
        throw error;
      }
    } else if (answerers.pause && call) {
      const question: CallQuestion = { server, mode, message, requestHash };
      if (schema) question.requestedSchema = schema;
      if (asked.url !== undefined) question.url = asked.url;
      if (asked.elicitationId !== undefined) question.elicitationId = asked.elicitationId;
      pauseCallFor(call.runId, call.toolCallId, question);
      report('paused');
      // The call ends here; the resume that has the answer makes it again.
      call.abort.abort();
      return { action: 'cancel' };
    } else {
      // Nobody to ask and no run call to pause (a call outside a run, or parallel calls to this server).
      report('cancel');
      return { action: 'cancel' };
    }
    if (answer.action !== 'accept') {
      report(answer.action, stored !== undefined);
      return { action: answer.action };
    }
    if (mode === 'url' || !schema) {
      report('accept', stored !== undefined);
      return { action: 'accept' };
    }
    const checked = await checkForm(schema, answer.content ?? {});
    if (!checked.ok) {
      report('error');
      throw new sdk.McpError(
        INVALID_PARAMS,
        `the answer to "${message}" does not match the requested schema: ${checked.errors.join('; ')}`,
      );
    }
    report('accept', stored !== undefined);
    return { action: 'accept', content: checked.value as ElicitResult['content'] };
  };
}

/** Each field's `default`, for a form to start from. */
export function defaultsOf(schema: NonNullable<McpElicitRequest['requestedSchema']>): Record<string, unknown> {
  const defaults: Record<string, unknown> = {};
  for (const [name, field] of Object.entries(schema.properties ?? {})) if (field.default !== undefined) defaults[name] = field.default;
  return defaults;
}

/**
 * Checks an accepted form against the requested schema: defaults filled in for fields left
 * out, strings coerced to the field's type ("3" → 3, "true" → true), problems named per field.
 */
export async function checkForm(
  schema: NonNullable<McpElicitRequest['requestedSchema']>,
  content: Record<string, unknown>,
): Promise<{ ok: true; value: Record<string, unknown> } | { ok: false; errors: string[] }> {
  const validate = await compileValidator(schema as unknown as JsonSchema);
  const result = validate({ ...content });
  return result.ok ? { ok: true, value: result.value } : { ok: false, errors: result.errors };
}

/** JSON-RPC code of `UrlElicitationRequiredError`: the request needs the person to open URLs first. */
const URL_ELICITATION_REQUIRED = -32042;

/** A URL a server requires to be opened before it can answer a request. */
export interface RequiredUrl {
  url: string;
  message: string;
  elicitationId?: string;
}

/** The URL elicitations of a `-32042` error (found among its causes), or `undefined` for any other error. */
export function requiredUrls(error: unknown): RequiredUrl[] | undefined {
  for (let e = error, depth = 0; e !== undefined && e !== null && depth < 6; e = (e as { cause?: unknown }).cause, depth++) {
    const { code, data } = e as { code?: unknown; data?: { elicitations?: unknown } };
    if (code !== URL_ELICITATION_REQUIRED || !Array.isArray(data?.elicitations)) continue;
    return (data.elicitations as Array<Record<string, unknown>>)
      .filter((x) => typeof x.url === 'string')
      .map((x) => ({
        url: x.url as string,
        message: typeof x.message === 'string' ? x.message : '',
        ...(typeof x.elicitationId === 'string' ? { elicitationId: x.elicitationId } : {}),
      }));
  }
  return undefined;
}

/**
 * Asks the person to open each required URL (URL-mode elicitations through the `elicit`
 * hook, each reported as an event); `true` when every one was accepted, so the request
 * can be sent again.
 */
export async function openRequiredUrls(
  server: string,
  urls: RequiredUrl[],
  elicit: (request: McpElicitRequest) => Promise<McpElicitResult>,
  emit: (event: McpEvent) => void,
  signal: AbortSignal,
): Promise<boolean> {
  for (const required of urls) {
    const request: McpElicitRequest = {
      server,
      mode: 'url',
      message: required.message,
      url: required.url,
      signal,
      ...(required.elicitationId ? { elicitationId: required.elicitationId } : {}),
    };
    const answer = await elicit(request);
    emit({ type: 'mcp_elicitation', server, mode: 'url', message: required.message, action: answer.action, url: required.url });
    if (answer.action !== 'accept') return false;
  }
  return true;
}
