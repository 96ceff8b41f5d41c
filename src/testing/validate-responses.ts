/**
 * Request validation of the OpenAI Responses wire (`POST /v1/responses`), with OpenAI's
 * messages and params (observed 2025). The server keeps no state, so a request must carry
 * its whole history in `input`: `previous_response_id` is answered like an unknown id.
 */
import type { InvalidRequestBody } from './validate-chat.js';
import { describeType, isObject } from './wire-format.js';

type Problem = InvalidRequestBody['error'];

function problem(message: string, param: string | null, code: string | null = null): Problem {
  return { message, type: 'invalid_request_error', param, code };
}

function missing(param: string): Problem {
  return problem(`Missing required parameter: '${param}'.`, param, 'missing_required_parameter');
}

function wrongType(param: string, expected: string, value: unknown): Problem {
  return problem(`Invalid type for '${param}': expected ${expected}, but got ${describeType(value)} instead.`, param, 'invalid_type');
}

function invalidValue(value: unknown, supported: string[], param: string): Problem {
  const list = supported.map((s) => `'${s}'`);
  const text = list.length > 2 ? `${list.slice(0, -1).join(', ')}, and ${list.at(-1)}` : list.join(' and ');
  return problem(`Invalid value: '${String(value)}'. Supported values are: ${text}.`, param, 'invalid_value');
}

const ROLES = ['assistant', 'system', 'developer', 'user'];
const INPUT_PARTS = ['input_text', 'input_image', 'input_file'];
const OUTPUT_PARTS = ['output_text', 'refusal'];
const TOOL_NAME = /^[a-zA-Z0-9_-]+$/;
/** Item ids name their kind; sending a call_id as `id` is a classic adapter bug. */
const ID_PREFIX: Record<string, string> = { message: 'msg', function_call: 'fc', reasoning: 'rs' };

function checkContent(content: unknown, role: string, at: string): Problem | undefined {
  if (typeof content === 'string') return undefined;
  if (!Array.isArray(content))
    return content === undefined ? missing(`${at}.content`) : wrongType(`${at}.content`, 'a string or an array', content);
  const allowed = role === 'assistant' ? OUTPUT_PARTS : INPUT_PARTS;
  for (let j = 0; j < content.length; j++) {
    const part: unknown = content[j];
    const here = `${at}.content[${j}]`;
    if (!isObject(part)) return wrongType(here, 'an object', part);
    if (!allowed.includes(String(part.type))) return invalidValue(part.type, allowed, `${here}.type`);
    if ((part.type === 'input_text' || part.type === 'output_text') && typeof part.text !== 'string') return missing(`${here}.text`);
  }
  return undefined;
}

function checkItem(item: Record<string, unknown>, at: string): Problem | undefined {
  const type = item.type ?? 'message';
  const prefix = ID_PREFIX[String(type)];
  if (item.id !== undefined && prefix !== undefined && (typeof item.id !== 'string' || !item.id.startsWith(prefix))) {
    return problem(`Invalid '${at}.id': '${String(item.id)}'. Expected an ID that begins with '${prefix}'.`, `${at}.id`, 'invalid_value');
  }
  switch (type) {
    case 'message': {
      if (item.role === undefined) return missing(`${at}.role`);
      if (!ROLES.includes(String(item.role))) return invalidValue(item.role, ROLES, `${at}.role`);
      return checkContent(item.content, String(item.role), at);
    }
    case 'function_call':
      if (typeof item.call_id !== 'string')
        return item.call_id === undefined ? missing(`${at}.call_id`) : wrongType(`${at}.call_id`, 'a string', item.call_id);
      if (typeof item.name !== 'string')
        return item.name === undefined ? missing(`${at}.name`) : wrongType(`${at}.name`, 'a string', item.name);
      // The parsed object instead of the JSON text: the Chat Completions bug, here too.
      if (typeof item.arguments !== 'string')
        return item.arguments === undefined ? missing(`${at}.arguments`) : wrongType(`${at}.arguments`, 'a string', item.arguments);
      return undefined;
    case 'function_call_output':
      if (typeof item.call_id !== 'string')
        return item.call_id === undefined ? missing(`${at}.call_id`) : wrongType(`${at}.call_id`, 'a string', item.call_id);
      if (typeof item.output !== 'string' && !Array.isArray(item.output)) {
        return item.output === undefined ? missing(`${at}.output`) : wrongType(`${at}.output`, 'a string or an array', item.output);
      }
      return undefined;
    case 'reasoning':
      if (!Array.isArray(item.summary))
        return item.summary === undefined ? missing(`${at}.summary`) : wrongType(`${at}.summary`, 'an array', item.summary);
      return undefined;
    default:
      return invalidValue(type, ['message', 'function_call', 'function_call_output', 'reasoning'], `${at}.type`);
  }
}

function checkInput(input: unknown): Problem | undefined {
  if (typeof input === 'string') return undefined;
  if (input === undefined) return missing('input');
  if (!Array.isArray(input)) return wrongType('input', 'a string or an array', input);
  const calls = new Set<string>();
  const answered = new Set<string>();
  for (let i = 0; i < input.length; i++) {
    const item: unknown = input[i];
    const at = `input[${i}]`;
    if (!isObject(item)) return wrongType(at, 'an object', item);
    const failure = checkItem(item, at);
    if (failure) return failure;
    if (item.type === 'function_call') calls.add(item.call_id as string);
    if (item.type === 'function_call_output') {
      const id = item.call_id as string;
      if (!calls.has(id)) return problem(`No tool call found for function call output with call_id ${id}.`, 'input');
      answered.add(id);
    }
  }
  for (const id of calls) if (!answered.has(id)) return problem(`No tool output found for function call ${id}.`, 'input');
  return undefined;
}

function checkTools(tools: unknown): Problem | undefined {
  if (tools === undefined) return undefined;
  if (!Array.isArray(tools)) return wrongType('tools', 'an array', tools);
  for (let i = 0; i < tools.length; i++) {
    const tool: unknown = tools[i];
    const at = `tools[${i}]`;
    if (!isObject(tool)) return wrongType(at, 'an object', tool);
    if (tool.type === undefined) return missing(`${at}.type`);
    if (tool.type !== 'function') continue;
    // A Chat Completions tool (`{type, function: {name}}`) has no top-level name.
    if (typeof tool.name !== 'string')
      return tool.name === undefined ? missing(`${at}.name`) : wrongType(`${at}.name`, 'a string', tool.name);
    if (!TOOL_NAME.test(tool.name)) {
      return problem(
        `Invalid '${at}.name': string does not match pattern. Expected a string that matches the pattern '^[a-zA-Z0-9_-]+$'.`,
        `${at}.name`,
        'invalid_value',
      );
    }
    const parameters = tool.parameters;
    if (parameters !== undefined && parameters !== null && (!isObject(parameters) || parameters.type !== 'object')) {
      return problem(
        `Invalid schema for function '${tool.name}': schema must be a JSON Schema of 'type: "object"'.`,
        `${at}.parameters`,
        'invalid_function_parameters',
      );
    }
  }
  return undefined;
}

/**
 * Checks a parsed Responses request the way OpenAI does: every `function_call_output`
 * answers a `function_call` earlier in `input`, every `function_call` has its output, item
 * ids and content part types fit their item. Returns the HTTP 400 body for the first
 * problem, or `undefined` when the request is valid.
 *
 * @example
 * const failure = validateResponsesRequest(JSON.parse(body));
 * if (failure) respond(400, failure);
 */
export function validateResponsesRequest(body: unknown): InvalidRequestBody | undefined {
  if (!isObject(body)) return { error: wrongType('body', 'an object', body) };
  if (typeof body.model !== 'string' || body.model === '') return { error: missing('model') };
  if (typeof body.previous_response_id === 'string') {
    const id = body.previous_response_id;
    return { error: problem(`Previous response with id '${id}' not found.`, 'previous_response_id', 'previous_response_not_found') };
  }
  const max = body.max_output_tokens;
  if (typeof max === 'number' && max < 16) {
    return {
      error: problem(
        `Invalid 'max_output_tokens': integer below minimum value. Expected a value >= 16, but got ${max} instead.`,
        'max_output_tokens',
        'integer_below_min_value',
      ),
    };
  }
  if (body.instructions !== undefined && body.instructions !== null && typeof body.instructions !== 'string') {
    return { error: wrongType('instructions', 'a string', body.instructions) };
  }
  const failure = checkInput(body.input) ?? checkTools(body.tools);
  return failure === undefined ? undefined : { error: failure };
}
