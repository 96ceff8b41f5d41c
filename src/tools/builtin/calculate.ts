/**
 * `calculate`: arithmetic for models, which are bad at it. A small recursive-descent
 * parser — never `eval` — over this grammar (lowest precedence first):
 *
 *   expression := term (("+" | "-") term)*
 *   term       := unary (("*" | "/" | "%") unary)*
 *   unary      := ("-" | "+") unary | power
 *   power      := primary ("^" unary)?          right-associative: 2^3^2 = 2^9
 *   primary    := number | "(" expression ")"
 *
 * Power binds tighter than unary minus, as in mathematics (and Python): -2^2 = -4, while
 * 2^-1 = 0.5. `%` is the remainder with the dividend's sign (JavaScript's). `**` is read
 * as `^`, and `×`, `÷`, `−` as `*`, `/`, `-`. Positions in errors are 0-based, like
 * `JSON.parse`'s.
 */
import { ReinError } from '../../errors.js';
import { defineTool } from '../define.js';
import type { Tool } from '../types.js';

type Op = '+' | '-' | '*' | '/' | '%' | '^' | '(' | ')';
type Token =
  | { kind: 'number'; value: number; text: string; pos: number }
  | { kind: 'op'; op: Op; pos: number }
  | { kind: 'end'; pos: number };

const MAX_LENGTH = 1_000;
const MAX_DEPTH = 100;
const NUMBER = /(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?/y;
const ALIASES: Record<string, Op> = { '×': '*', '÷': '/', '−': '-' };

function fail(message: string, position?: number): never {
  throw new ReinError('invalid_arguments', 'correctable', message, position === undefined ? {} : { details: { position } });
}

function tokenize(source: string): Token[] {
  const tokens: Token[] = [];
  let i = 0;
  while (i < source.length) {
    const ch = source[i]!;
    if (/\s/.test(ch)) {
      i++;
      continue;
    }
    if (/[\d.]/.test(ch)) {
      NUMBER.lastIndex = i;
      const match = NUMBER.exec(source);
      if (!match) fail(`malformed number at position ${i}`, i);
      const text = match[0];
      if (/[eE]/.test(source[i + text.length] ?? '')) {
        fail(`malformed number "${source.slice(i, i + text.length + 1)}…" at position ${i}`, i);
      }
      tokens.push({ kind: 'number', value: Number(text), text, pos: i });
      i += text.length;
      continue;
    }
    if (ch === '*' && source[i + 1] === '*') {
      tokens.push({ kind: 'op', op: '^', pos: i });
      i += 2;
      continue;
    }
    if ('+-*/%^()'.includes(ch) || ch in ALIASES) {
      tokens.push({ kind: 'op', op: ALIASES[ch] ?? (ch as Op), pos: i });
      i++;
      continue;
    }
    const word = /^[A-Za-z_]\w*/.exec(source.slice(i))?.[0] ?? ch;
    fail(`unexpected '${word}' at position ${i}: only numbers, + - * / % ^ and parentheses are supported`, i);
  }
  tokens.push({ kind: 'end', pos: source.length });
  return tokens;
}

/**
 * Evaluates an arithmetic expression. Throws a ReinError (`invalid_arguments`) for bad
 * syntax (with the 0-based position), division or modulo by zero, and results that are
 * not finite real numbers.
 *
 * @example
 * evaluate('-2^2 + (1 + .5) * 1e1'); // 11
 */
export function evaluate(expression: string): number {
  if (expression.length > MAX_LENGTH) {
    fail(`expression is too long (${expression.length} characters; at most ${MAX_LENGTH})`);
  }
  const tokens = tokenize(expression);
  let index = 0;
  let depth = 0;
  const peek = (): Token => tokens[index]!;
  const isOp = (token: Token, ...ops: Op[]): token is Token & { kind: 'op' } => token.kind === 'op' && ops.includes(token.op);
  const describe = (token: Token): string =>
    token.kind === 'end' ? 'end of expression' : token.kind === 'number' ? `number ${token.text}` : `'${token.op}'`;

  function parseExpression(): number {
    let value = parseTerm();
    for (let t = peek(); isOp(t, '+', '-'); t = peek()) {
      index++;
      const right = parseTerm();
      value = t.op === '+' ? value + right : value - right;
    }
    return value;
  }

  function parseTerm(): number {
    let value = parseUnary();
    for (let t = peek(); isOp(t, '*', '/', '%'); t = peek()) {
      index++;
      const right = parseUnary();
      if (t.op === '*') value *= right;
      else if (right === 0) fail(`${t.op === '/' ? 'division' : 'modulo'} by zero at position ${t.pos}`, t.pos);
      else value = t.op === '/' ? value / right : value % right;
    }
    return value;
  }

  function parseUnary(): number {
    const t = peek();
    if (isOp(t, '-', '+')) {
      index++;
      const operand = nested(parseUnary);
      return t.op === '-' ? -operand : operand;
    }
    return parsePower();
  }

  function parsePower(): number {
    const base = parsePrimary();
    if (!isOp(peek(), '^')) return base;
    index++;
    return base ** nested(parseUnary);
  }

  function parsePrimary(): number {
    const t = peek();
    if (t.kind === 'number') {
      index++;
      return t.value;
    }
    if (t.kind === 'op' && t.op === '(') {
      index++;
      const value = nested(parseExpression);
      const close = peek();
      if (!isOp(close, ')')) {
        const got = `got ${describe(close)} at position ${close.pos}`;
        fail(`expected ')' to close the '(' at position ${t.pos}, ${got}`, close.pos);
      }
      index++;
      return value;
    }
    if (t.kind === 'end') {
      if (expression.trim() === '') fail('expression is empty');
      fail(`unexpected end of expression at position ${t.pos}: a number or '(' is missing`, t.pos);
    }
    return fail(`unexpected ${describe(t)} at position ${t.pos}`, t.pos);
  }

  // Recursion depth is bounded so "((((…" cannot overflow the stack.
  function nested(parse: () => number): number {
    if (++depth > MAX_DEPTH) fail(`expression is nested too deeply (more than ${MAX_DEPTH} levels)`);
    try {
      return parse();
    } finally {
      depth--;
    }
  }

  const value = parseExpression();
  const rest = peek();
  if (rest.kind !== 'end') fail(`unexpected ${describe(rest)} at position ${rest.pos}`, rest.pos);
  if (Number.isNaN(value)) fail('the result is not a real number (e.g. a fractional power of a negative number)');
  if (!Number.isFinite(value)) fail('the result is too large to represent (or a division by zero inside a power)');
  return value;
}

/**
 * Formats a result without binary floating-point noise: 0.1 + 0.2 → "0.3". Integers are
 * printed as JavaScript prints them (2^60 → "1152921504606847000"); other numbers are
 * rounded to 15 significant digits, the precision a double holds reliably.
 */
export function formatNumber(value: number): string {
  if (Object.is(value, -0)) return '0';
  if (Number.isInteger(value)) return String(value);
  return String(Number(value.toPrecision(15)));
}

/** Creates the `calculate` tool. */
export function createCalculateTool(): Tool {
  return defineTool({
    name: 'calculate',
    description:
      'Evaluate an arithmetic expression exactly instead of computing it in your head. Supports + - * / % ^ ' +
      '(power; -2^2 = -4), parentheses, and decimals like 0.5, .5 or 1e3. No variables or functions.',
    parameters: {
      type: 'object',
      properties: {
        expression: { type: 'string', description: 'The expression, e.g. "(12.5 + 7) * 3 / 2^4".' },
      },
      required: ['expression'],
      additionalProperties: false,
    },
    risk: 'read',
    effect: 'pure',
    execute: (args) => {
      const expression = String(args.expression);
      const result = evaluate(expression);
      return { content: formatNumber(result), details: { expression, result } };
    },
  });
}
