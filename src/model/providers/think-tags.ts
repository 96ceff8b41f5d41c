/**
 * Splitting reasoning written inline as `<think>…</think>` at the start of a Chat
 * Completions `content` from the answer after it. Reasoning models served without a
 * reasoning parser answer like this: Qwen3 / DeepSeek-R1 / QwQ through Ollama's `/v1`,
 * vLLM without `--reasoning-parser`, llama.cpp with `--reasoning-format none`.
 *
 * Only a content that begins (after whitespace) with `<think>` is split; any other content,
 * and a `<think>` later in an answer, pass through unchanged. The text arrives in pieces
 * cut anywhere (`"<th"` + `"ink>"`), so the splitter holds back only what could still be
 * the start of a tag, and lets everything else through at once.
 */

const OPEN = '<think>';
const CLOSE = '</think>';

/** Where the splitter is in the content. */
type State =
  /** Nothing but whitespace and a prefix of `<think>` yet: held. */
  | 'start'
  /** Inside `<think>`: thinking, up to `</think>`. */
  | 'thinking'
  /** Right after `</think>`: whitespace before the answer is dropped. */
  | 'after'
  /** Everything from here on is text, as it comes. */
  | 'text';

/** Receives the split pieces in order; `text` is never empty. */
export type ThinkTagSink = (kind: 'text' | 'thinking', text: string) => void;

/**
 * One content's splitter: {@link push} each piece as it arrives, {@link end} once after the
 * last. An unclosed `<think>` stays thinking to the end (the answer is then empty).
 *
 * @example
 * const splitter = new ThinkTagSplitter((kind, text) => console.log(kind, text));
 * splitter.push('<th'); splitter.push('ink>plan</think>\n\nHello'); splitter.end();
 * // thinking plan · text Hello
 */
export class ThinkTagSplitter {
  private state: State = 'start';
  /** Text held back: the start of the content, or a possible start of `</think>`. */
  private held = '';

  constructor(private readonly sink: ThinkTagSink) {}

  /** True once the content is known not to start with `<think>` (pieces then pass through as they are). */
  get passing(): boolean {
    return this.state === 'text';
  }

  push(piece: string): void {
    if (piece === '') return;
    switch (this.state) {
      case 'text':
        this.sink('text', piece);
        return;
      case 'start':
        this.atStart(this.held + piece);
        return;
      case 'thinking':
        this.inThinking(this.held + piece);
        return;
      case 'after':
        this.afterThinking(piece);
        return;
    }
  }

  /** The content ended: what is held goes out as what it was going to be. */
  end(): void {
    const held = this.held;
    this.held = '';
    if (held === '') return;
    // A content that was only whitespace or a cut `<thi` is text, as sent; a cut `</thi` inside thinking is thinking.
    if (this.state === 'start') this.sink('text', held);
    else if (this.state === 'thinking') this.sink('thinking', held);
    this.state = 'text';
  }

  private atStart(text: string): void {
    const at = firstNonSpace(text);
    const rest = text.length - at;
    if (rest >= OPEN.length ? text.startsWith(OPEN, at) : OPEN.startsWith(text.slice(at))) {
      if (rest < OPEN.length) {
        this.held = text; // whitespace, or a prefix of the tag: may still be either
        return;
      }
      this.held = '';
      this.state = 'thinking';
      this.inThinking(text.slice(at + OPEN.length));
      return;
    }
    this.held = '';
    this.state = 'text';
    this.sink('text', text);
  }

  private inThinking(text: string): void {
    const close = text.indexOf(CLOSE);
    if (close >= 0) {
      if (close > 0) this.sink('thinking', text.slice(0, close));
      this.held = '';
      this.state = 'after';
      this.afterThinking(text.slice(close + CLOSE.length));
      return;
    }
    const keep = partialTagAtEnd(text, CLOSE);
    if (keep < text.length) this.sink('thinking', text.slice(0, text.length - keep));
    this.held = keep === 0 ? '' : text.slice(text.length - keep);
  }

  private afterThinking(text: string): void {
    const at = firstNonSpace(text);
    if (at === text.length) return; // the blank line after the tag: dropped
    this.state = 'text';
    this.sink('text', at === 0 ? text : text.slice(at));
  }
}

/** The index of the first character of `text` that is not whitespace (`text.length` when none). */
function firstNonSpace(text: string): number {
  let at = 0;
  while (at < text.length && isSpace(text.charCodeAt(at))) at++;
  return at;
}

function isSpace(c: number): boolean {
  return c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09;
}

/** How many characters at the end of `text` are a proper prefix of `tag` (they may be its start). */
function partialTagAtEnd(text: string, tag: string): number {
  for (let n = Math.min(tag.length - 1, text.length); n > 0; n--) {
    if (text.endsWith(tag.slice(0, n))) return n;
  }
  return 0;
}
