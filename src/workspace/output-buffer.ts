/**
 * A command's output, kept within a character budget as it streams: the head and the tail
 * (where errors and summaries are), with an honest note of what was cut in between. The
 * memory held never exceeds about twice the budget, however much the command prints.
 */
import { formatCount } from './text.js';

// CSI and OSC escape sequences (colours, cursor moves, titles): noise to a model.
const ANSI = /\u001b\[[0-?]*[ -/]*[@-~]|\u001b\][^\u0007\u001b]*(?:\u0007|\u001b\\)/g;

/** Collects streamed text, keeping the first and last halves of `maxChars`. */
export class OutputBuffer {
  private head = '';
  private tail: string[] = [];
  private tailLength = 0;
  private total = 0;
  private readonly headLimit: number;
  private readonly tailLimit: number;

  constructor(maxChars: number) {
    this.headLimit = Math.ceil(maxChars / 2);
    this.tailLimit = Math.max(0, maxChars - this.headLimit);
  }

  /** Characters received so far. */
  get receivedChars(): number {
    return this.total;
  }

  /** Characters that will be left out of {@link text}. */
  get omittedChars(): number {
    return Math.max(0, this.total - this.headLimit - this.tailLimit);
  }

  push(text: string): void {
    if (text === '') return;
    this.total += text.length;
    if (this.head.length < this.headLimit) {
      const room = this.headLimit - this.head.length;
      this.head += text.slice(0, room);
      text = text.slice(room);
      if (text === '') return;
    }
    this.tail.push(text);
    this.tailLength += text.length;
    // Compact only now and then: joining on every chunk would be quadratic.
    if (this.tailLength > 2 * this.tailLimit + 65_536) this.compact();
  }

  /** The kept output with escape sequences removed and a note where the middle was cut. */
  text(): string {
    this.compact();
    const tail = this.tail[0] ?? '';
    const omitted = this.omittedChars;
    const head = this.head.replace(ANSI, '');
    if (omitted === 0) return head + tail.replace(ANSI, '');
    const note = `\n… [output cut: ${formatCount(omitted)} of ${formatCount(this.total)} characters omitted from the middle] …\n`;
    return head + note + tail.replace(ANSI, '');
  }

  private compact(): void {
    const joined = this.tail.join('');
    const kept = joined.length > this.tailLimit ? joined.slice(joined.length - this.tailLimit) : joined;
    this.tail = kept === '' ? [] : [kept];
    this.tailLength = kept.length;
  }
}
