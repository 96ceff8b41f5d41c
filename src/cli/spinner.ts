/** A one-line spinner on a TTY stream; a no-op elsewhere (pipes, CI, --json, TERM=dumb). */
import type { Writable } from 'node:stream';
import { visibleLabel } from './terminal-text.js';

const FRAMES = ['⠋', '⠙', '⠹', '⠸', '⠼', '⠴', '⠦', '⠧', '⠇', '⠏'];

/**
 * Shows `label` with a spinner until `stop()`; safe to start and stop repeatedly. Starting
 * it while it runs changes its label (what it waits for moved on: the model began thinking,
 * a tool reported progress) without a gap in the frames.
 */
export class Spinner {
  private timer: NodeJS.Timeout | undefined;
  private frame = 0;
  private label = '';

  /** `enabled: false`: never draw, even at a terminal (one that cannot take escape codes). */
  constructor(
    private readonly out: Writable & { isTTY?: boolean },
    private readonly options: { enabled?: boolean } = {},
  ) {}

  /** True while frames are being drawn. */
  get running(): boolean {
    return this.timer !== undefined;
  }

  /** `label` may name what the model chose (a tool): it is drawn on one line, its control characters shown. */
  start(label: string): void {
    if (!this.out.isTTY || this.options.enabled === false) return;
    const shown = visibleLabel(label);
    const changed = shown !== this.label;
    this.label = shown;
    if (this.timer) {
      if (changed) this.draw();
      return;
    }
    this.draw();
    this.timer = setInterval(() => this.draw(), 80);
    this.timer.unref();
  }

  stop(): void {
    if (!this.timer) return;
    clearInterval(this.timer);
    this.timer = undefined;
    this.out.write('\r\x1b[2K');
  }

  private draw(): void {
    this.out.write(`\r\x1b[2K${FRAMES[this.frame++ % FRAMES.length]} ${this.label}`);
  }
}
