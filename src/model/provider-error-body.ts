/**
 * Reading what a provider said about its error out of whichever body shape it used: the
 * OpenAI `{error: {…}}`, a bare `{message, code}` frame (vLLM's `{"object":"error",…}`),
 * Gemini's list `[{error: {…}}]`, FastAPI's `{detail}`, or a non-JSON page from a proxy.
 * Classifying what was read is http-errors.ts's job.
 */
import { isRecord } from './json.js';

/** What a provider said about its error, from whichever body shape it used. */
export interface ProviderError {
  message: string;
  code?: string;
  type?: string;
  param?: string;
  /**
   * A status carried inside the body (OpenRouter `code: 429`, LiteLLM `code: "429"`, Groq
   * `status_code`, Azure `status: 400`, vLLM's `{"object":"error",…,"code":400}`).
   */
  status?: number;
  /**
   * The body was a FastAPI / pydantic validation list (`detail: [{loc, msg}]`): the server
   * refused the request's shape, which FastAPI answers with 422 (a stream says no status).
   */
  validation?: true;
}

const MAX_QUOTED = 500;

/** What an error body (parsed JSON) says, when it is one of the shapes providers use. */
export function readProviderError(body: unknown): ProviderError | undefined {
  // Gemini's OpenAI-compatible endpoint answers with a list, `[{"error": {…}}]`; its first entry says what failed.
  if (Array.isArray(body)) return body.length > 0 ? readProviderError(body[0]) : undefined;
  if (!isRecord(body)) return undefined;
  const error = body.error;
  if (typeof error === 'string') return { message: quote(error) };
  if (error === undefined && body.detail !== undefined) return readValidationDetail(body.detail);
  const source = isRecord(error) ? error : typeof body.message === 'string' ? body : undefined;
  if (source === undefined) return undefined;
  const info: ProviderError = { message: quote(typeof source.message === 'string' ? source.message : JSON.stringify(source)) };
  // OpenRouter puts the upstream provider's own words in metadata.raw.
  const raw = isRecord(source.metadata) ? source.metadata.raw : undefined;
  if (typeof raw === 'string' && raw !== '') info.message += ` (${quote(raw)})`;
  // A status may come as a number (OpenRouter, vLLM) or as digits in a string (LiteLLM's `"code": "429"`).
  const codeStatus = statusOf(source.code);
  if (codeStatus !== undefined) info.status = codeStatus;
  else if (typeof source.code === 'string') info.code = source.code;
  const type = named(source.type);
  if (type !== undefined) info.type = type;
  const param = named(source.param);
  if (param !== undefined) info.param = param;
  if (typeof source.status_code === 'number') info.status = source.status_code;
  // Azure repeats the status as `status: 400`; Google's is a name ("INVALID_ARGUMENT"), kept as the type for logs.
  const status = statusOf(source.status);
  if (status !== undefined) info.status ??= status;
  else if (info.type === undefined && typeof source.status === 'string' && /^[A-Z_]+$/.test(source.status)) info.type = source.status;
  return info;
}

/**
 * A validation error of a server built on FastAPI / pydantic (vLLM, SGLang, LiteLLM, many
 * gateways): `{ detail: [{ loc: ['body', 'stream_options'], msg: 'Extra inputs are not
 * permitted', input }] }`, or `{ detail: "text" }`. Each entry's location and words; the
 * echoed `input` (the request itself) is left out.
 */
export function readValidationDetail(detail: unknown): ProviderError | undefined {
  if (typeof detail === 'string') return { message: quote(detail) };
  // An HTTPException raised with a dict: `{detail: {error: {…}}}` or `{detail: {message, code}}`.
  if (isRecord(detail)) return readProviderError(detail);
  if (!Array.isArray(detail)) return undefined;
  const parts: string[] = [];
  let param: string | undefined;
  for (const item of detail) {
    if (!isRecord(item)) continue;
    const loc = Array.isArray(item.loc) ? item.loc.filter((p) => p !== 'body').join('.') : '';
    const last = Array.isArray(item.loc) ? item.loc[item.loc.length - 1] : undefined;
    if (param === undefined && typeof last === 'string') param = last;
    parts.push(`${loc ? `${loc}: ` : ''}${typeof item.msg === 'string' ? item.msg : 'invalid'}`);
  }
  if (parts.length === 0) return undefined;
  return { message: quote(parts.join('; ')), validation: true, ...(param !== undefined ? { param } : {}) };
}

/**
 * A body that is not JSON, as words to quote: an HTML error page of a proxy or load
 * balancer (nginx's `413 Request Entity Too Large`) becomes its title and text, not markup.
 */
export function bodyText(body: string): string {
  const text = body.trim();
  if (!text.startsWith('<')) return quote(text);
  const title = /<title[^>]*>([^<]*)<\/title>/i.exec(text)?.[1]?.replace(/\s+/g, ' ').trim() ?? '';
  let rest = text
    .replace(/<(script|style|head)\b[\s\S]*?<\/\1>/gi, ' ')
    .replace(/<[^>]*>/g, ' ')
    .replace(/&nbsp;/g, ' ')
    .replace(/\s+/g, ' ')
    .trim();
  // Error pages repeat their title as a heading: say it once.
  if (title !== '') rest = rest.split(title).join(' ').replace(/\s+/g, ' ').trim();
  if (title === '') return quote(rest);
  return quote(rest === '' ? title : `${title} (${rest})`);
}

/** Parsed JSON, or `undefined` for text that is not JSON. */
export function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** A provider's text cut to a length a message can quote. */
export function quote(text: string): string {
  return text.length > MAX_QUOTED ? `${text.slice(0, MAX_QUOTED)}…` : text;
}

/** An HTTP error status given as a number or as a string of digits (`400`, `"429"`). */
function statusOf(value: unknown): number | undefined {
  const status = typeof value === 'number' ? value : typeof value === 'string' && /^\d{3}$/.test(value) ? Number(value) : undefined;
  return status !== undefined && status >= 400 && status < 600 ? status : undefined;
}

/** A type or param name, without the `"None"` / `"null"` a Python server writes for a missing one. */
function named(value: unknown): string | undefined {
  return typeof value === 'string' && value !== '' && value !== 'None' && value !== 'null' ? value : undefined;
}
