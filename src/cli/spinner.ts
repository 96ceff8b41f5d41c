/** A one-line spinner on a TTY stream; a no-op elsewhere (pipes, CI, --json). */
import type { Writable } from 'node:stream';

const FRAMES = ['⠋', '⠙', '⠹', '⠸', '⠼', '⠴', '⠦', '⠧', '⠇', '⠏'];

/** Shows `label` with a spinner until `stop()`; safe to start and stop repeatedly. */
export class Spinner {
  private timer: NodeJS.Timeout | undefined;
  private frame = 0;

  constructor(private readonly out: Writable & { isTTY?: boolean }) {}

  start(label: string): void {
    if (!this.out.isTTY || this.timer) return;
    const draw = (): void => {
      this.out.write(`\r\x1b[2K${FRAMES[this.frame++ % FRAMES.length]} ${label}`);
    };
    draw();
    this.timer = setInterval(draw, 80);
    this.timer.unref();
  }

  stop(): void {
    if (!this.timer) return;
    clearInterval(this.timer);
    this.timer = undefined;
    this.out.write('\r\x1b[2K');
  }
}
