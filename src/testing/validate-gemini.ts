/**
 * Request validation of the Gemini wire (`generateContent` / `streamGenerateContent`), with
 * Google's messages where we know them (observed 2024–2025): contents alternate between
 * `user` and `model`, each `functionCall` turn is answered by a `user` turn of as many
 * `functionResponse` parts with the same names, and proto JSON rules (one data field per
 * part, Struct-typed `args` / `response`, no unknown fields).
 */
import { field } from './view.js';
import { isObject } from './wire-format.js';

/** Google's error body: `{error:{code, message, status}}`. */
export interface GeminiErrorBody {
  error: { code: number; message: string; status: string; details?: unknown[] };
}

/** A Google error body. */
export function geminiError(code: number, status: string, message: string, details?: unknown[]): GeminiErrorBody {
  return { error: details === undefined ? { code, message, status } : { code, message, status, details } };
}

// Proto JSON takes camelCase and snake_case names alike; anything else is rejected.
const TOP_LEVEL = new Set(
  [
    'contents',
    'tools',
    'toolConfig',
    'safetySettings',
    'systemInstruction',
    'generationConfig',
    'cachedContent',
    'model',
    'labels',
  ].flatMap((n) => [n, n.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`)]),
);
const DATA_FIELDS: Array<[string, string]> = [
  ['text', 'text'],
  ['inlineData', 'inline_data'],
  ['fileData', 'file_data'],
  ['functionCall', 'function_call'],
  ['functionResponse', 'function_response'],
  ['executableCode', 'executable_code'],
  ['codeExecutionResult', 'code_execution_result'],
];
const FUNCTION_NAME = /^[a-zA-Z_][a-zA-Z0-9_.:-]{0,63}$/;
const BASE64 = /^[A-Za-z0-9+/_-]*={0,2}$/;
const ALTERNATE = 'Please ensure that multiturn requests alternate between user and model.';
const RESPONSE_AFTER_CALL = 'Please ensure that function response turn comes immediately after a function call turn.';
const RESPONSE_COUNT =
  'Please ensure that the number of function response parts is equal to the number of function call parts of the function call turn.';

type Problem = string;

function notStruct(path: string, value: unknown): Problem {
  return `Invalid value at '${path}' (type.googleapis.com/google.protobuf.Struct), ${JSON.stringify(value)}`;
}

/** The data fields a part sets (`text`, `functionCall`, …), by their camelCase names. */
function dataOf(part: Record<string, unknown>): string[] {
  return DATA_FIELDS.filter(([camel, snake]) => part[camel] !== undefined || part[snake] !== undefined).map(([camel]) => camel);
}

function checkPart(part: unknown, at: string, role: string): Problem | undefined {
  if (!isObject(part))
    return `Invalid value at '${at}' (type.googleapis.com/google.ai.generativelanguage.v1beta.Part), ${JSON.stringify(part)}`;
  const data = dataOf(part);
  if (data.length === 0) return `* GenerateContentRequest.${at}.data: required oneof field 'data' must have one initialized field`;
  if (data.length > 1) return `Invalid value at '${at}': oneof field 'data' is already set. Cannot set '${data[1]}'`;
  const signature = field(part, 'thoughtSignature', 'thought_signature');
  if (signature !== undefined && (typeof signature !== 'string' || !BASE64.test(signature))) {
    return `Invalid value at '${at}.thought_signature' (TYPE_BYTES), Base64 decoding failed for ${JSON.stringify(signature)}`;
  }
  const call = field(part, 'functionCall', 'function_call');
  if (call !== undefined) {
    if (role !== 'model')
      return 'Please ensure that function call turn comes immediately after a user turn or after a function response turn.';
    if (!isObject(call) || typeof call.name !== 'string') return `* GenerateContentRequest.${at}.function_call.name: Name cannot be empty.`;
    if (call.args !== undefined && !isObject(call.args)) return notStruct(`${at}.function_call.args`, call.args);
  }
  const result = field(part, 'functionResponse', 'function_response');
  if (result !== undefined) {
    if (role !== 'user') return RESPONSE_AFTER_CALL;
    if (!isObject(result) || typeof result.name !== 'string')
      return `* GenerateContentRequest.${at}.function_response.name: Name cannot be empty.`;
    if (!isObject(result.response)) return notStruct(`${at}.function_response.response`, result.response);
  }
  return undefined;
}

/** The function calls (or responses) of a content: name and optional id, in order. */
function functionParts(content: unknown, camel: string, snake: string): Array<{ name: string; id?: unknown }> {
  if (!isObject(content) || !Array.isArray(content.parts)) return [];
  const out: Array<{ name: string; id?: unknown }> = [];
  for (const part of content.parts) {
    const value = isObject(part) ? field(part, camel, snake) : undefined;
    if (isObject(value)) out.push({ name: String(value.name), id: value.id });
  }
  return out;
}

/** Checks that `content` answers every call of `previous`: same count, same names (and ids, when both carry them). */
function checkAnswers(calls: Array<{ name: string; id?: unknown }>, content: unknown, at: string): Problem | undefined {
  const results = functionParts(content, 'functionResponse', 'function_response');
  if (results.length !== calls.length) return RESPONSE_COUNT;
  const open = [...calls];
  for (let j = 0; j < results.length; j++) {
    const result = results[j]!;
    const match = open.findIndex((c) => c.name === result.name && (c.id === undefined || result.id === undefined || c.id === result.id));
    if (match === -1) {
      const names = calls.map((c) => c.name).join(', ');
      return `* GenerateContentRequest.${at}.parts[${j}].function_response.name: "${result.name}" answers no function call of the previous turn (${names}). ${RESPONSE_AFTER_CALL}`;
    }
    open.splice(match, 1);
  }
  return undefined;
}

function checkContents(contents: unknown): Problem | undefined {
  if (contents === undefined || (Array.isArray(contents) && contents.length === 0))
    return '* GenerateContentRequest.contents: contents is not specified';
  if (!Array.isArray(contents))
    return `Invalid value at 'contents' (type.googleapis.com/google.ai.generativelanguage.v1beta.Content), ${JSON.stringify(contents)}`;
  let previous: string | undefined;
  for (let i = 0; i < contents.length; i++) {
    const content: unknown = contents[i];
    const at = `contents[${i}]`;
    if (!isObject(content))
      return `Invalid value at '${at}' (type.googleapis.com/google.ai.generativelanguage.v1beta.Content), ${JSON.stringify(content)}`;
    const role = content.role ?? 'user';
    if (role !== 'user' && role !== 'model') return 'Please use a valid role: user, model.';
    if ((i === 0 && role !== 'user') || role === previous) return ALTERNATE;
    previous = role;
    const parts = content.parts;
    if (!Array.isArray(parts) || parts.length === 0) return `* GenerateContentRequest.${at}.parts: contents.parts must not be empty.`;
    for (let j = 0; j < parts.length; j++) {
      const failure = checkPart(parts[j], `${at}.parts[${j}]`, role);
      if (failure) return failure;
    }
    if (role === 'model') {
      const calls = functionParts(content, 'functionCall', 'function_call');
      if (calls.length > 0) {
        const failure = checkAnswers(calls, contents[i + 1], `contents[${i + 1}]`);
        if (failure) return failure;
      }
    } else if (functionParts(content, 'functionResponse', 'function_response').length > 0) {
      if (functionParts(contents[i - 1], 'functionCall', 'function_call').length === 0) return RESPONSE_AFTER_CALL;
    }
  }
  return undefined;
}

function checkTools(tools: unknown): Problem | undefined {
  if (tools === undefined) return undefined;
  if (!Array.isArray(tools))
    return `Invalid value at 'tools' (type.googleapis.com/google.ai.generativelanguage.v1beta.Tool), ${JSON.stringify(tools)}`;
  for (let i = 0; i < tools.length; i++) {
    const tool: unknown = tools[i];
    if (!isObject(tool))
      return `Invalid value at 'tools[${i}]' (type.googleapis.com/google.ai.generativelanguage.v1beta.Tool), ${JSON.stringify(tool)}`;
    const declarations = field(tool, 'functionDeclarations', 'function_declarations');
    if (declarations === undefined) continue;
    if (!Array.isArray(declarations)) return `Invalid value at 'tools[${i}].function_declarations', ${JSON.stringify(declarations)}`;
    for (let j = 0; j < declarations.length; j++) {
      const declaration: unknown = declarations[j];
      const name = isObject(declaration) ? declaration.name : undefined;
      if (typeof name !== 'string' || !FUNCTION_NAME.test(name)) {
        return `* GenerateContentRequest.tools[${i}].function_declarations[${j}].name: Invalid function name. Must start with a letter or an underscore. Must be alphameric (a-z, A-Z, 0-9), underscores (_), dots (.), colons (:), or dashes (-), with a maximum length of 64.`;
      }
    }
  }
  return undefined;
}

/**
 * Checks a parsed `generateContent` request the way Gemini does. Returns the HTTP 400 body
 * for the first problem, or `undefined` when the request is valid.
 *
 * @example
 * const failure = validateGeminiRequest(JSON.parse(body));
 * if (failure) respond(400, failure);
 */
export function validateGeminiRequest(body: unknown): GeminiErrorBody | undefined {
  const invalid = (message: string): GeminiErrorBody => geminiError(400, 'INVALID_ARGUMENT', message);
  if (!isObject(body)) return invalid(`Invalid JSON payload received. Expected an object, got ${JSON.stringify(body)}.`);
  for (const key of Object.keys(body))
    if (!TOP_LEVEL.has(key)) return invalid(`Invalid JSON payload received. Unknown name "${key}": Cannot find field.`);
  const failure = checkContents(body.contents) ?? checkTools(body.tools);
  return failure === undefined ? undefined : invalid(failure);
}
