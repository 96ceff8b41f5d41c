/**
 * Text from the model, its tools and its server made harmless to show at a terminal.
 *
 * Such text can hold control sequences a terminal obeys: `ESC [2J` clears the screen,
 * `OSC 0` sets the window title, `OSC 52` writes the clipboard, a bare carriage return
 * overwrites the line. Every C0 and C1 control character except newline and tab, and a
 * carriage return that does not end a line (`\r\n` is kept), is shown instead as a
 * visible symbol: a C0 control or DEL as its Unicode control picture (ESC 0x1b as `␛`, a
 * bare CR as `␍`, BEL as `␇`, DEL as `␡`); a C1 control, which a terminal reads as ESC
 * and a character, as that pair (0x9b, CSI, as `␛[`). So `ESC [2J` shows as `␛[2J`: a
 * symbol no plain text is mistaken for (unlike caret notation's `^[`), one column wide.
 * Neutralising each control character on its own also disarms a sequence split across
 * streamed pieces: its ESC is shown, what follows arrives as text.
 */
import { redactUrlPasswords } from './url-passwords.js';

/** Any character {@link visibleControls} may rewrite; the cheap test made before any replace. */
const CONTROL = /[\x00-\x08\x0b-\x1f\x7f-\x9f]/;
/** What is shown: every control but `\n`, `\t` and a CR that a `\n` follows. */
const SHOWN = /\r(?!\n)|[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]/g;

/** The symbol shown for the control character `c`: `␛` for ESC, `␡` for DEL, `␛[` for 0x9b. */
function symbol(c: string): string {
  const code = c.charCodeAt(0);
  if (code === 0x7f) return '\u2421';
  // C1 (0x80–0x9f) is ESC followed by the character 0x40 lower (ECMA-48, 7-bit form).
  if (code >= 0x80) return `\u241b${String.fromCharCode(code - 0x40)}`;
  // Control pictures (U+2400–U+241F) are in the order of the C0 controls.
  return String.fromCharCode(0x2400 + code);
}

/**
 * `text` with its control characters shown as symbols (see above); the very same
 * string when it has none. A CR at the very end counts as bare: for text that arrives in
 * pieces, use {@link TerminalAnswer}.
 */
export function visibleControls(text: string): string {
  return CONTROL.test(text) ? text.replace(SHOWN, symbol) : text;
}

/**
 * The answer as it streams to a terminal, piece by piece, its control characters shown
 * as symbols. A piece that ends in CR is held back by that CR: whether it ends a line
 * (`\r\n`, kept) or overwrites it (bare, shown) depends on the next piece.
 */
export class TerminalAnswer {
  private heldCR = false;

  /** What to write of `piece` now. */
  write(piece: string): string {
    if (!this.heldCR && !CONTROL.test(piece)) return piece;
    let text = this.heldCR ? `\r${piece}` : piece;
    this.heldCR = text.endsWith('\r');
    if (this.heldCR) text = text.slice(0, -1);
    return visibleControls(text);
  }

  /** The end of the answer: a CR still held back was bare. */
  flush(): string {
    if (!this.heldCR) return '';
    this.heldCR = false;
    return symbol('\r');
  }
}

/** A spinner's label: one line (whitespace collapsed), its control characters shown. */
export function visibleLabel(text: string): string {
  return visibleControls(text.replace(/\s+/g, ' '));
}

/**
 * Text for a line on stderr from what the model, a tool or a server said: URL passwords
 * redacted (url-passwords.ts) and control characters visible, at a terminal or not (a log
 * is read at a terminal too).
 */
export function terminalLine(text: string): string {
  return visibleControls(redactUrlPasswords(text));
}
