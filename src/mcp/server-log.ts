/**
 * A server's log: what it wrote to stderr and what rein noted about it (connects, crashes,
 * reconnects), each sent to the host's log sink and kept in a small ring for `status()`
 * and error messages. Never written to the terminal.
 */
import type { McpLogEntry } from './types.js';

/** See the module comment. */
export class ServerLog {
  private readonly stderr: string[] = [];
  private readonly recent: string[] = [];
  /** Notes said once (a refreshed tool list repeats its warnings). */
  private readonly said = new Set<string>();

  constructor(
    private readonly server: string,
    private readonly sink: (entry: McpLogEntry) => void,
  ) {}

  /** A line the server wrote to stderr. */
  stderrLine(line: string): void {
    push(this.stderr, line, 20);
    push(this.recent, line, 50);
    this.sink({ server: this.server, level: 'info', kind: 'stderr', message: line });
  }

  /** A log message the server sent over MCP (`notifications/message`). */
  serverMessage(level: McpLogEntry['level'], message: string): void {
    if (level !== 'debug') push(this.recent, message, 50);
    this.sink({ server: this.server, level, kind: 'server', message });
  }

  /** Something rein noticed; `debug` notes go to the sink only. */
  note(level: McpLogEntry['level'], message: string): void {
    if (level !== 'debug') push(this.recent, `[rein] ${message}`, 50);
    this.sink({ server: this.server, level, kind: 'event', message });
  }

  /** {@link note}, but each distinct message only once. */
  noteOnce(level: McpLogEntry['level'], message: string): void {
    if (this.said.has(message)) return;
    this.said.add(message);
    this.note(level, message);
  }

  /** The last lines of stderr on one line (for error messages); empty when there are none. */
  stderrTail(count = 3, maxChars = 400): string {
    const text = this.stderr.slice(-count).join(' | ');
    return text.length > maxChars ? `…${text.slice(-maxChars)}` : text;
  }

  /** The kept lines, stderr and notes, oldest first. */
  recentLines(): string[] {
    return [...this.recent];
  }
}

function push(ring: string[], line: string, capacity: number): void {
  ring.push(line);
  if (ring.length > capacity) ring.splice(0, ring.length - capacity);
}
