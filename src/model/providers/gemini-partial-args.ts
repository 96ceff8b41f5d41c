/**
 * Gemini's streamed function-call arguments (`streamFunctionCallArguments`, Gemini 3) turned
 * into JSON text written strictly forward.
 *
 * Instead of text fragments, Gemini streams value updates addressed by a JSON path:
 * `{functionCall: {partialArgs: [{jsonPath: "$.location", stringValue: "Bos", willContinue:
 * true}], willContinue: true}}`. A string value may arrive in several pieces (each with
 * `willContinue: true` until one without it, often `stringValue: ""`, ends it); numbers,
 * booleans and nulls arrive whole (`numberValue`, `boolValue`, `nullValue`); fields arrive
 * in document order. See fixtures/gemini/stream-function-call-partial-args.chunks.jsonl.
 *
 * Writing that as JSON text, opening and closing objects and arrays as the paths move,
 * gives rein's usual `tool_call_delta` events: the pieces concatenate to `rawArguments`,
 * and the incremental parser shows the arguments growing, as with every other provider.
 */

type Json = Record<string, unknown>;

/** One open object or array: the path segment that led into it, and how many members it has. */
interface Frame {
  segment: string | number;
  isArray: boolean;
  members: number;
}

/** Writes one call's arguments; every method returns the text to append (maybe ''). */
export class PartialArgsWriter {
  private readonly stack: Frame[] = [];
  private started = false;
  private closed = false;
  /** The JSON path of the string value still being written (its closing quote is due). */
  private openString: string | undefined;

  /** Whole arguments (`functionCall.args`), unless partial ones were already written. */
  whole(args: Json): string {
    if (this.started) return '';
    this.started = true;
    this.closed = true;
    return JSON.stringify(args);
  }

  /** One `partialArgs` entry. Entries with a path that cannot be read are skipped. */
  partial(arg: Json): string {
    if (this.closed || typeof arg.jsonPath !== 'string') return '';
    const path = parsePath(arg.jsonPath);
    if (path === undefined || path.length === 0) return '';
    let out = '';
    if (!this.started) {
      this.started = true;
      this.stack.push({ segment: '$', isArray: false, members: 0 });
      out += '{';
    }
    if (this.openString !== undefined) {
      if (this.openString === arg.jsonPath && typeof arg.stringValue === 'string')
        return out + this.stringPiece(arg.jsonPath, arg.stringValue, arg.willContinue === true);
      out += '"';
      this.openString = undefined;
    }
    out += this.moveTo(path);
    out += this.member(path[path.length - 1] as string | number);
    if (typeof arg.stringValue === 'string') return `${out}"${this.stringPiece(arg.jsonPath, arg.stringValue, arg.willContinue === true)}`;
    if (typeof arg.numberValue === 'number' && Number.isFinite(arg.numberValue)) return out + JSON.stringify(arg.numberValue);
    if (typeof arg.boolValue === 'boolean') return out + String(arg.boolValue);
    return `${out}null`; // nullValue, or a value kind this version does not know
  }

  /** Closes what is open: the call is complete. `{}` when no argument ever came. */
  end(): string {
    if (this.closed) return '';
    this.closed = true;
    if (!this.started) return '{}';
    let out = this.openString === undefined ? '' : '"';
    this.openString = undefined;
    while (this.stack.length > 0) out += (this.stack.pop() as Frame).isArray ? ']' : '}';
    return out;
  }

  private stringPiece(path: string, value: string, more: boolean): string {
    const escaped = JSON.stringify(value).slice(1, -1);
    if (more) {
      this.openString = path;
      return escaped;
    }
    this.openString = undefined;
    return `${escaped}"`;
  }

  /** Closes the containers the new path leaves and opens the ones it enters (all but the leaf). */
  private moveTo(path: Array<string | number>): string {
    let common = 0;
    // stack[i + 1] is the container reached through path[i].
    while (common < this.stack.length - 1 && common < path.length - 1 && this.stack[common + 1]?.segment === path[common]) common++;
    let out = '';
    while (this.stack.length - 1 > common) out += (this.stack.pop() as Frame).isArray ? ']' : '}';
    for (let i = common; i < path.length - 1; i++) {
      out += this.member(path[i] as string | number);
      const isArray = typeof path[i + 1] === 'number';
      out += isArray ? '[' : '{';
      this.stack.push({ segment: path[i] as string | number, isArray, members: 0 });
    }
    return out;
  }

  /** The separator and key before a new member of the innermost open container. */
  private member(segment: string | number): string {
    const top = this.stack[this.stack.length - 1] as Frame;
    let out = top.members > 0 ? ',' : '';
    top.members++;
    if (!top.isArray) out += `${JSON.stringify(String(segment))}:`;
    return out;
  }
}

/** `$.a.b[0]['c d']` → `['a', 'b', 0, 'c d']`; `undefined` when it is not such a path. */
export function parsePath(path: string): Array<string | number> | undefined {
  if (!path.startsWith('$')) return undefined;
  const segments: Array<string | number> = [];
  const token = /\.([^.[\]]+)|\[(\d+)\]|\['((?:[^'\\]|\\.)*)'\]|\["((?:[^"\\]|\\.)*)"\]/y;
  token.lastIndex = 1;
  while (token.lastIndex < path.length) {
    const match = token.exec(path);
    if (match === null) return undefined;
    if (match[1] !== undefined) segments.push(match[1]);
    else if (match[2] !== undefined) segments.push(Number(match[2]));
    else segments.push((match[3] ?? match[4] ?? '').replace(/\\(.)/g, '$1'));
  }
  return segments;
}
