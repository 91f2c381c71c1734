/**
 * @module Line input for the SSH REPL. With a pty the client's terminal is in raw mode and the
 * server plays the line discipline (what termios ICANON/ECHO would do): it echoes typed
 * characters, erases on Backspace/DEL, kills the line on Ctrl-U, erases a word on Ctrl-W,
 * cancels on Ctrl-C (`^C`), ends on Ctrl-D at an empty line, treats CR, LF and CR LF as Enter,
 * and swallows cursor-key escape sequences (ECMA-48 CSI/SS3). Without a pty input is plain
 * text: lines end at LF (a trailing CR is dropped) and nothing is echoed.
 * @pure
 */

/** Something the REPL must act on. */
export type LineEvent = { type: 'line'; text: string } | { type: 'eof' } | { type: 'interrupt' };

/** Output to send back to the client (echo) and events, from one {@link LineEditor.feed} call. */
export interface FeedResult {
  echo: string;
  events: LineEvent[];
}

/** Longest line kept; further characters are dropped (and a bell echoed in pty mode). */
export const MAX_LINE_CHARS = 8192;

type EscapeState = 'none' | 'esc' | 'csi' | 'ss3';

/** Turns client input into lines; one instance per shell channel. */
export class LineEditor {
  private readonly terminal: boolean;
  private line: string[] = [];
  private escape: EscapeState = 'none';
  private lastWasCr = false;

  /** `terminal`: true when the client has a pty (echo and control keys), false for plain input. */
  constructor(terminal: boolean) {
    this.terminal = terminal;
  }

  /** Consumes decoded input text and returns the echo and any completed events. */
  feed(text: string): FeedResult {
    const out: FeedResult = { echo: '', events: [] };
    for (const ch of text) {
      if (this.terminal) this.feedTerminal(ch, out);
      else this.feedPlain(ch, out);
    }
    return out;
  }

  /** Ends input (channel EOF): a partial line is delivered before `eof`. */
  end(): LineEvent[] {
    const events: LineEvent[] = [];
    if (this.line.length > 0) events.push({ type: 'line', text: this.line.join('') });
    this.line = [];
    events.push({ type: 'eof' });
    return events;
  }

  private push(ch: string, out: FeedResult): void {
    if (this.line.length >= MAX_LINE_CHARS) {
      if (this.terminal) out.echo += '\x07';
      return;
    }
    this.line.push(ch);
    if (this.terminal) out.echo += ch;
  }

  private enter(out: FeedResult): void {
    out.events.push({ type: 'line', text: this.line.join('') });
    this.line = [];
    if (this.terminal) out.echo += '\r\n';
  }

  private feedPlain(ch: string, out: FeedResult): void {
    if (ch === '\n') {
      const last = this.line.length - 1;
      if (this.line[last] === '\r') this.line.pop();
      this.enter(out);
    } else this.push(ch, out);
  }

  private feedTerminal(ch: string, out: FeedResult): void {
    const wasCr = this.lastWasCr;
    this.lastWasCr = false;
    if (this.escape !== 'none') {
      this.feedEscape(ch);
      return;
    }
    const code = ch.codePointAt(0) ?? 0;
    switch (ch) {
      case '\r':
        this.lastWasCr = true;
        this.enter(out);
        return;
      case '\n':
        if (!wasCr) this.enter(out);
        return;
      case '\x7f':
      case '\b':
        if (this.line.pop() !== undefined) out.echo += '\b \b';
        return;
      case '\x03':
        this.line = [];
        out.echo += '^C\r\n';
        out.events.push({ type: 'interrupt' });
        return;
      case '\x04':
        if (this.line.length === 0) out.events.push({ type: 'eof' });
        return;
      case '\x15':
        out.echo += '\b \b'.repeat(this.line.length);
        this.line = [];
        return;
      case '\x17': {
        let erased = 0;
        while (this.line.length > 0 && this.line[this.line.length - 1] === ' ') { this.line.pop(); erased++; }
        while (this.line.length > 0 && this.line[this.line.length - 1] !== ' ') { this.line.pop(); erased++; }
        out.echo += '\b \b'.repeat(erased);
        return;
      }
      case '\x1b':
        this.escape = 'esc';
        return;
      case '\t':
        this.push(' ', out);
        return;
      default:
        if (code < 0x20) return;
        this.push(ch, out);
    }
  }

  private feedEscape(ch: string): void {
    const code = ch.codePointAt(0) ?? 0;
    if (this.escape === 'esc') {
      this.escape = ch === '[' ? 'csi' : ch === 'O' ? 'ss3' : 'none';
      return;
    }
    if (this.escape === 'ss3') {
      this.escape = 'none';
      return;
    }
    // CSI: parameter and intermediate bytes 0x20–0x3F, final byte 0x40–0x7E.
    if (code >= 0x40 && code <= 0x7e) this.escape = 'none';
    else if (code < 0x20 || code > 0x7e) this.escape = 'none';
  }
}
