/**
 * `elicitation/create`: a server asks the person for something — a form of primitive
 * fields (form mode) or to open a URL (URL mode). The host's `elicit` hook asks; rein fills
 * in the schema's defaults before asking, checks an accepted form against the requested
 * schema (with the same validator as tool arguments) and reports each elicitation as an
 * `mcp_elicitation` event, without the values typed.
 */
import type { ElicitRequest, ElicitResult } from '@modelcontextprotocol/sdk/types.js';
import type { JsonSchema } from '../model/types.js';
import { compileValidator } from '../tools/validate.js';
import type { Sdk } from './sdk.js';
import type { McpElicitRequest, McpElicitResult, McpEvent } from './types.js';

/** JSON-RPC "invalid params". */
const INVALID_PARAMS = -32602;

/** The request handler for one server. */
export function elicitationHandler(
  server: string,
  elicit: (request: McpElicitRequest) => Promise<McpElicitResult>,
  emit: (event: McpEvent) => void,
  sdk: Sdk,
): (request: ElicitRequest, extra: { signal: AbortSignal }) => Promise<ElicitResult> {
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
    const report = (action: McpElicitResult['action'] | 'error'): void =>
      emit({ type: 'mcp_elicitation', server, mode, message, action, ...(asked.url !== undefined ? { url: asked.url } : {}) });
    let answer: McpElicitResult;
    try {
      answer = await elicit(asked);
    } catch (error) {
      report('error');
      throw error;
    }
    if (answer.action !== 'accept') {
      report(answer.action);
      return { action: answer.action };
    }
    if (mode === 'url' || !schema) {
      report('accept');
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
    report('accept');
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
