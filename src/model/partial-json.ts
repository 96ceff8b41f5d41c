/**
 * An incremental JSON parser for tool-call arguments that arrive in pieces.
 *
 * Each `push` consumes only the new characters: the parser keeps its stack of open
 * containers and the token in progress, so a whole argument string costs O(length) however
 * it is split (re-parsing the buffer on every delta would be O(n²) on long arguments).
 */
import { MAX_ARGUMENT_DEPTH } from './json-limits.js';

type Container = Record<string, unknown> | unknown[];

interface Frame {
  container: Container;
  isArray: boolean;
  /** The key whose value comes next (objects only). */
  key: string;
  /** Where this container sits in its parent: the key or the array index. */
  slot: string | number;
  /** Handed out by `value`: copy before the next write (copy-on-write). */
  shared: boolean;
}

/** Where the parser is, between two characters. */
enum State {
  Value, // a value must come (root, after `:`, after `,` in an array)
  ValueOrEnd, // after `[`: a value or `]`
  KeyOrEnd, // after `{`: a key or `}`
  Key, // after `,` in an object: a key
  Colon, // after a key
  AfterValue, // after a member: `,` or the closing bracket
  String, // inside a string (a key or a value)
  Escape, // after a backslash inside a string
  Unicode, // inside `\uXXXX`
  Number,
  Literal, // true / false / null
  Done, // the root value is complete: only whitespace may follow
  Failed,
}

const NUMBER = /^-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?$/;
const ESCAPES: Record<string, string> = { '"': '"', '\\': '\\', '/': '/', b: '\b', f: '\f', n: '\n', r: '\r', t: '\t' };

function isWhitespace(c: number): boolean {
  return c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09;
}

function isNumberChar(c: number): boolean {
  // digits . + - e E
  return (c >= 0x30 && c <= 0x39) || c === 0x2e || c === 0x2b || c === 0x2d || c === 0x65 || c === 0x45;
}

/**
 * Parses JSON text fed in arbitrary pieces and exposes the best value so far.
 *
 * `value` holds objects and arrays with their completed members; a string in progress is
 * included as its prefix; a number or literal in progress is left out until it ends.
 * A value once read is never changed by later pushes: the containers still open are
 * copied on their next write (copy-on-write), so a read costs O(depth) and the next write
 * copies only the open path, never the completed parts, keeping the whole parse linear
 * for the usual shapes (a few keys, long strings).
 *
 * Invalid JSON never throws: the parser sets `failed` and stops updating `value`.
 *
 * @example
 * const p = new PartialJsonParser();
 * p.push('{"path": "src/ma');
 * p.value; // { path: 'src/ma' }
 * p.push('in.ts", "line": 4');
 * p.value; // { path: 'src/main.ts' }  (4 may still grow: 42)
 * p.push('2}');
 * p.value; // { path: 'src/main.ts', line: 42 }; p.done === true
 */
export class PartialJsonParser {
  private state: State = State.Value;
  private readonly stack: Frame[] = [];
  private root: unknown = undefined;
  /** The token in progress: string contents, number text, literal text or `\u` hex digits. */
  private token = '';
  private literal = '';
  private stringIsKey = false;
  /** Where a value string in progress sits in its array (objects use `frame.key`). */
  private stringIndex = 0;
  private unicode = '';

  /** True once the input was found not to be JSON; `value` no longer changes. */
  get failed(): boolean {
    return this.state === State.Failed;
  }

  /** True once the root value is complete (only whitespace may follow). */
  get done(): boolean {
    return this.state === State.Done;
  }

  /** The best value so far (`undefined` before any value has started); a snapshot. */
  get value(): unknown {
    for (const frame of this.stack) frame.shared = true;
    return this.root;
  }

  /** Consumes the next piece of JSON text. */
  push(text: string): void {
    const n = text.length;
    let i = 0;
    while (i < n && this.state !== State.Failed) {
      if (this.state === State.String) {
        i = this.readString(text, i);
        continue;
      }
      const c = text.charCodeAt(i);
      switch (this.state) {
        case State.Escape:
          this.readEscape(text[i] as string);
          break;
        case State.Unicode:
          this.readUnicode(text[i] as string);
          break;
        case State.Number:
          if (isNumberChar(c)) {
            this.token += text[i];
            break;
          }
          this.endNumber();
          continue; // the terminator belongs to the next state: read it again
        case State.Literal:
          this.readLiteral(text[i] as string);
          break;
        default:
          if (!isWhitespace(c)) this.readStructural(c);
      }
      i++;
    }
  }

  /**
   * Declares the input complete. Completes a number at the root (`42` cannot know it is
   * done otherwise) and marks anything still open as failed.
   */
  end(): void {
    if (this.state === State.Number && this.stack.length === 0) this.endNumber();
    if (this.state !== State.Done) this.state = State.Failed;
  }

  private readStructural(c: number): void {
    switch (this.state) {
      case State.Value:
        this.startValue(c);
        return;
      case State.ValueOrEnd:
        if (c === 0x5d /* ] */) this.closeContainer(true);
        else this.startValue(c);
        return;
      case State.KeyOrEnd:
        if (c === 0x7d /* } */) this.closeContainer(false);
        else this.startKey(c);
        return;
      case State.Key:
        this.startKey(c);
        return;
      case State.Colon:
        this.state = c === 0x3a /* : */ ? State.Value : State.Failed;
        return;
      case State.AfterValue: {
        const frame = this.stack[this.stack.length - 1] as Frame;
        if (c === 0x2c /* , */) this.state = frame.isArray ? State.Value : State.Key;
        else if (c === (frame.isArray ? 0x5d : 0x7d)) this.closeContainer(frame.isArray);
        else this.state = State.Failed;
        return;
      }
      default: // Done: trailing non-whitespace
        this.state = State.Failed;
    }
  }

  private startKey(c: number): void {
    if (c !== 0x22 /* " */) {
      this.state = State.Failed;
      return;
    }
    this.token = '';
    this.stringIsKey = true;
    this.state = State.String;
  }

  private startValue(c: number): void {
    if (c === 0x7b /* { */ || c === 0x5b /* [ */) {
      // Past the argument depth limit the call is refused anyway; stopping here keeps the
      // copy-on-write path (recursive in depth) and whoever reads `value` off deep input.
      if (this.stack.length >= MAX_ARGUMENT_DEPTH) {
        this.state = State.Failed;
        return;
      }
      const isArray = c === 0x5b;
      const container: Container = isArray ? [] : {};
      const parent = this.stack[this.stack.length - 1];
      const index = this.place(container);
      this.stack.push({ container, isArray, key: '', slot: parent === undefined || parent.isArray ? index : parent.key, shared: false });
      this.state = isArray ? State.ValueOrEnd : State.KeyOrEnd;
    } else if (c === 0x22 /* " */) {
      this.token = '';
      this.stringIsKey = false;
      this.stringIndex = this.place('');
      this.state = State.String;
    } else if (c === 0x2d /* - */ || (c >= 0x30 && c <= 0x39)) {
      this.token = String.fromCharCode(c);
      this.state = State.Number;
    } else if (c === 0x74 /* t */ || c === 0x66 /* f */ || c === 0x6e /* n */) {
      this.literal = c === 0x74 ? 'true' : c === 0x66 ? 'false' : 'null';
      this.token = String.fromCharCode(c);
      this.state = State.Literal;
    } else {
      this.state = State.Failed;
    }
  }

  /** Reads plain string characters in one slice; returns the next index to read. */
  private readString(text: string, start: number): number {
    let i = start;
    const n = text.length;
    let c = 0;
    while (i < n) {
      c = text.charCodeAt(i);
      if (c === 0x22 || c === 0x5c || c < 0x20) break;
      i++;
    }
    if (i > start) this.token += text.slice(start, i);
    if (i === n) {
      if (i > start) this.updateString();
      return i;
    }
    if (c === 0x22) this.endString();
    else if (c === 0x5c) this.state = State.Escape;
    else this.state = State.Failed; // raw control characters are not allowed in JSON strings
    return i + 1;
  }

  private readEscape(ch: string): void {
    if (ch === 'u') {
      this.unicode = '';
      this.state = State.Unicode;
      return;
    }
    const decoded = ESCAPES[ch];
    if (decoded === undefined) {
      this.state = State.Failed;
      return;
    }
    this.token += decoded;
    this.state = State.String;
    this.updateString();
  }

  private readUnicode(ch: string): void {
    const c = ch.charCodeAt(0);
    const hex = (c >= 0x30 && c <= 0x39) || (c >= 0x41 && c <= 0x46) || (c >= 0x61 && c <= 0x66);
    if (!hex) {
      this.state = State.Failed;
      return;
    }
    this.unicode += ch;
    if (this.unicode.length < 4) return;
    // Surrogate halves are appended one code unit at a time; two halves in a row form the
    // pair, exactly as JSON.parse does.
    this.token += String.fromCharCode(parseInt(this.unicode, 16));
    this.state = State.String;
    this.updateString();
  }

  private endString(): void {
    if (this.stringIsKey) {
      (this.stack[this.stack.length - 1] as Frame).key = this.token;
      this.state = State.Colon;
    } else {
      this.updateString();
      this.afterValue();
    }
    this.token = '';
  }

  /** Writes the value string in progress to its place. */
  private updateString(): void {
    if (this.stringIsKey) return;
    const depth = this.stack.length - 1;
    if (depth < 0) {
      this.root = this.token;
      return;
    }
    const frame = this.stack[depth] as Frame;
    const container = this.writable(depth);
    if (frame.isArray) (container as unknown[])[this.stringIndex] = this.token;
    else assign(container as Record<string, unknown>, frame.key, this.token);
  }

  private endNumber(): void {
    if (!NUMBER.test(this.token)) {
      this.state = State.Failed;
      return;
    }
    this.place(Number(this.token));
    this.token = '';
    this.afterValue();
  }

  private readLiteral(ch: string): void {
    if (ch !== this.literal[this.token.length]) {
      this.state = State.Failed;
      return;
    }
    this.token += ch;
    if (this.token.length < this.literal.length) return;
    this.place(this.literal === 'true' ? true : this.literal === 'false' ? false : null);
    this.token = '';
    this.afterValue();
  }

  private closeContainer(isArray: boolean): void {
    const frame = this.stack.pop();
    if (frame === undefined || frame.isArray !== isArray) {
      this.state = State.Failed;
      return;
    }
    this.afterValue();
  }

  private afterValue(): void {
    this.state = this.stack.length === 0 ? State.Done : State.AfterValue;
  }

  /** Puts a value where the next value goes; returns its array index (0 elsewhere). */
  private place(value: unknown): number {
    const depth = this.stack.length - 1;
    if (depth < 0) {
      this.root = value;
      return 0;
    }
    const frame = this.stack[depth] as Frame;
    const container = this.writable(depth);
    if (frame.isArray) return (container as unknown[]).push(value) - 1;
    assign(container as Record<string, unknown>, frame.key, value);
    return 0;
  }

  /** The open container at `depth`, copied first (with its open ancestors) if it was handed out. */
  private writable(depth: number): Container {
    const frame = this.stack[depth] as Frame;
    if (!frame.shared) return frame.container;
    const copy: Container = frame.isArray ? (frame.container as unknown[]).slice() : copyObject(frame.container as Record<string, unknown>);
    frame.container = copy;
    frame.shared = false;
    if (depth === 0) this.root = copy;
    else {
      const parent = this.writable(depth - 1);
      if (Array.isArray(parent)) parent[frame.slot as number] = copy;
      else assign(parent, frame.slot as string, copy);
    }
    return copy;
  }
}

function copyObject(source: Record<string, unknown>): Record<string, unknown> {
  const copy: Record<string, unknown> = {};
  for (const key of Object.keys(source)) assign(copy, key, source[key]);
  return copy;
}

function assign(target: Record<string, unknown>, key: string, value: unknown): void {
  // JSON.parse makes `__proto__` an own property; plain assignment would set the prototype.
  if (key === '__proto__') {
    Object.defineProperty(target, key, { value, writable: true, enumerable: true, configurable: true });
  } else {
    target[key] = value;
  }
}
