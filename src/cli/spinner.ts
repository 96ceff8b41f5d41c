/** A one-line spinner on a TTY stream; a no-op elsewhere (pipes, CI, --json). */
import type { Writable } from 'node:stream';

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

  constructor(private readonly out: Writable & { isTTY?: boolean }) {}

  /** True while frames are being drawn. */
  get running(): boolean {
    return this.timer !== undefined;
  }

  start(label: string): void {
    if (!this.out.isTTY) return;
    const changed = label !== this.label;
    this.label = label;
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
