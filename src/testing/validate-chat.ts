/**
 * Request validation as strict as OpenAI's own, with its messages, so a test that passes
 * against the scripted model proves the harness sends histories a real server accepts.
 * Messages and params follow what api.openai.com answers (observed 2024–2025).
 */

/** The body of an HTTP 400 answer, shaped like OpenAI's. */
export interface InvalidRequestBody {
  error: { message: string; type: 'invalid_request_error'; param: string | null; code: string | null };
}

const ROLES = new Set(['system', 'developer', 'user', 'assistant', 'tool', 'function']);
const TOOL_NAME = /^[a-zA-Z0-9_-]+$/;

type Problem = InvalidRequestBody['error'];

function problem(message: string, param: string | null, code: string | null = null): Problem {
  return { message, type: 'invalid_request_error', param, code };
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  const type = typeof value;
  return type === 'object' ? 'an object' : `a ${type}`;
}

function missing(param: string): Problem {
  return problem(`Missing required parameter: '${param}'.`, param, 'missing_required_parameter');
}

function wrongType(param: string, expected: string, value: unknown): Problem {
  return problem(`Invalid type for '${param}': expected ${expected}, but got ${describe(value)} instead.`, param, 'invalid_type');
}

/** Tool-call ids of an assistant message still waiting for their tool messages. */
interface OpenCalls {
  index: number;
  ids: string[];
  answered: Set<string>;
}

function unanswered(open: OpenCalls): Problem | undefined {
  const ids = open.ids.filter((id) => !open.answered.has(id));
  if (ids.length === 0) return undefined;
  return problem(
    "An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. " +
      `The following tool_call_ids did not have response messages: ${ids.join(', ')}`,
    `messages.[${open.index}].role`,
  );
}

function checkToolCalls(calls: unknown, at: string): Problem | string[] {
  if (!Array.isArray(calls)) return wrongType(at, 'an array', calls);
  if (calls.length === 0) {
    return problem(
      `Invalid '${at}': empty array. Expected an array with minimum length 1, but got an empty array instead.`,
      at,
      'empty_array',
    );
  }
  const ids: string[] = [];
  for (let j = 0; j < calls.length; j++) {
    const call: unknown = calls[j];
    const here = `${at}[${j}]`;
    if (!isObject(call)) return wrongType(here, 'an object', call);
    if (typeof call.id !== 'string') return call.id === undefined ? missing(`${here}.id`) : wrongType(`${here}.id`, 'a string', call.id);
    if (call.type === undefined) return missing(`${here}.type`);
    const fn = call.function;
    if (!isObject(fn)) return fn === undefined ? missing(`${here}.function`) : wrongType(`${here}.function`, 'an object', fn);
    if (typeof fn.name !== 'string')
      return fn.name === undefined ? missing(`${here}.function.name`) : wrongType(`${here}.function.name`, 'a string', fn.name);
    // Sending the parsed object instead of the JSON text is a classic adapter bug.
    if (typeof fn.arguments !== 'string') {
      return fn.arguments === undefined
        ? missing(`${here}.function.arguments`)
        : wrongType(`${here}.function.arguments`, 'a string', fn.arguments);
    }
    ids.push(call.id);
  }
  return ids;
}

function checkMessages(messages: unknown): Problem | undefined {
  if (messages === undefined) return missing('messages');
  if (!Array.isArray(messages)) return wrongType('messages', 'an array', messages);
  if (messages.length === 0) {
    return problem(
      "Invalid 'messages': empty array. Expected an array with minimum length 1, but got an empty array instead.",
      'messages',
      'empty_array',
    );
  }
  let open: OpenCalls | undefined;
  for (let i = 0; i < messages.length; i++) {
    const message: unknown = messages[i];
    const at = `messages[${i}]`;
    if (!isObject(message)) return wrongType(at, 'an object', message);
    const role = message.role;
    if (role === undefined) return missing(`${at}.role`);
    if (typeof role !== 'string' || !ROLES.has(role)) {
      return problem(
        `Invalid value: '${String(role)}'. Supported values are: 'system', 'assistant', 'user', 'tool', and 'function'.`,
        `${at}.role`,
        'invalid_value',
      );
    }
    if (role === 'tool') {
      const id = message.tool_call_id;
      if (typeof id !== 'string') return id === undefined ? missing(`${at}.tool_call_id`) : wrongType(`${at}.tool_call_id`, 'a string', id);
      if (open === undefined) {
        return problem(
          "Invalid parameter: messages with role 'tool' must be a response to a preceeding message with 'tool_calls'.",
          `messages.[${i}].role`,
        );
      }
      if (!open.ids.includes(id)) {
        return problem(
          `Invalid parameter: 'tool_call_id' of '${id}' not found in 'tool_calls' of previous message.`,
          `messages.[${i}].tool_call_id`,
        );
      }
      if (message.content === undefined) return missing(`${at}.content`);
      open.answered.add(id);
      continue;
    }
    // Any other message ends the run of tool messages answering the previous assistant.
    if (open !== undefined) {
      const failure = unanswered(open);
      if (failure) return failure;
      open = undefined;
    }
    if (role === 'assistant') {
      if (message.tool_calls !== undefined && message.tool_calls !== null) {
        const ids = checkToolCalls(message.tool_calls, `${at}.tool_calls`);
        if (!Array.isArray(ids)) return ids;
        open = { index: i, ids, answered: new Set() };
      } else if (message.content === undefined || message.content === null) {
        return problem("Invalid value for 'content': expected a string, got null.", `${at}.content`);
      }
    } else if (message.content === undefined) {
      return missing(`${at}.content`);
    }
  }
  return open === undefined ? undefined : unanswered(open);
}

function checkTools(tools: unknown): Problem | undefined {
  if (tools === undefined) return undefined;
  if (!Array.isArray(tools)) return wrongType('tools', 'an array', tools);
  for (let i = 0; i < tools.length; i++) {
    const tool: unknown = tools[i];
    const at = `tools[${i}]`;
    if (!isObject(tool)) return wrongType(at, 'an object', tool);
    if (tool.type === undefined) return missing(`${at}.type`);
    const fn = tool.function;
    if (!isObject(fn)) return fn === undefined ? missing(`${at}.function`) : wrongType(`${at}.function`, 'an object', fn);
    const name = fn.name;
    if (name === undefined) return missing(`${at}.function.name`);
    if (typeof name !== 'string') return wrongType(`${at}.function.name`, 'a string', name);
    if (!TOOL_NAME.test(name)) {
      return problem(
        `Invalid '${at}.function.name': string does not match pattern. Expected a string that matches the pattern '^[a-zA-Z0-9_-]+$'.`,
        `${at}.function.name`,
        'invalid_value',
      );
    }
    if (name.length > 64) {
      return problem(
        `Invalid '${at}.function.name': string too long. Expected a string with maximum length 64, but got a string with length ${name.length} instead.`,
        `${at}.function.name`,
        'string_above_max_length',
      );
    }
    const parameters = fn.parameters;
    if (parameters !== undefined && (!isObject(parameters) || parameters.type !== 'object')) {
      const got = isObject(parameters) ? `type: "${String(parameters.type)}"` : describe(parameters);
      return problem(
        `Invalid schema for function '${name}': schema must be a JSON Schema of 'type: "object"', got '${got}'.`,
        `${at}.function.parameters`,
        'invalid_function_parameters',
      );
    }
  }
  return undefined;
}

/**
 * Checks a parsed Chat Completions request the way OpenAI does. Returns the HTTP 400 body
 * for the first problem, or `undefined` when the request is valid.
 *
 * @example
 * const failure = validateChatRequest(JSON.parse(body));
 * if (failure) respond(400, failure);
 */
export function validateChatRequest(body: unknown): InvalidRequestBody | undefined {
  if (!isObject(body)) return { error: wrongType('body', 'an object', body) };
  if (typeof body.model !== 'string' || body.model === '') {
    return { error: problem('you must provide a model parameter', null) };
  }
  const failure = checkMessages(body.messages) ?? checkTools(body.tools);
  if (failure) return { error: failure };
  if (body.stream_options !== undefined && body.stream_options !== null && body.stream !== true) {
    return {
      error: problem("The 'stream_options' parameter is only allowed when 'stream' is enabled.", 'stream_options', 'invalid_value'),
    };
  }
  return undefined;
}
