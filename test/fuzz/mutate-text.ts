/**
 * @module Line-oriented text mutations (YAML manifests, authorized_keys files): drop, duplicate,
 * swap and splice lines, indentation changes, dictionary tokens, unicode and NUL, huge lines,
 * CR/CRLF/tab whitespace, truncation, and byte damage through UTF-8 (invalid sequences come
 * back as U+FFFD, as they would from a file or a request body).
 */
import type { Dice } from './dice.js';
import { mutateBytes } from './mutate-bytes.js';
import { ODD_STRINGS } from './mutate-json.js';

/** What a text mutator may draw on. */
export interface TextMutationOptions {
  /** Other real texts, for line splices. */
  readonly seeds: readonly string[];
  /** Tokens of the format (keywords, separators, key types, YAML indicators). */
  readonly tokens: readonly string[];
  /** Largest huge line; default 64 Ki characters. */
  readonly maxLineChars?: number;
}

function splitLines(text: string): string[] {
  return text.split('\n');
}

function mutateOnce(dice: Dice, text: string, o: TextMutationOptions): string {
  const lines = splitLines(text);
  const at = dice.int(lines.length);
  const line = lines[at] ?? '';
  switch (dice.int(13)) {
    case 0: lines.splice(at, 1); break;
    case 1: lines.splice(at, 0, line); break;
    case 2: { const other = dice.int(lines.length); lines[at] = lines[other] ?? ''; lines[other] = line; break; }
    case 3: { // token at a random column
      const col = dice.int(line.length + 1);
      lines[at] = `${line.slice(0, col)}${dice.pick(o.tokens)}${line.slice(col)}`;
      break;
    }
    case 4: { // replace a word by a token
      const words = line.split(/(\s+)/);
      const w = dice.int(words.length);
      words[w] = dice.pick(o.tokens);
      lines[at] = words.join('');
      break;
    }
    case 5: // indentation
      lines[at] = dice.chance(0.5) ? `${' '.repeat(dice.range(1, 8))}${line}` : line.trimStart();
      break;
    case 6: { // unicode, NUL, control characters
      const col = dice.int(line.length + 1);
      lines[at] = `${line.slice(0, col)}${dice.pick(ODD_STRINGS)}${line.slice(col)}`;
      break;
    }
    case 7: // a huge line
      lines[at] = line.repeat(Math.max(1, Math.ceil(dice.size(o.maxLineChars ?? 65_536) / Math.max(1, line.length))));
      break;
    case 8: { // splice lines of another seed
      const other = splitLines(dice.pick(o.seeds));
      const from = dice.int(other.length);
      lines.splice(at, dice.int(3), ...other.slice(from, from + dice.range(1, 6)));
      break;
    }
    case 9: return text.slice(0, dice.int(text.length + 1));
    case 10: return dice.pick([text.replaceAll('\n', '\r\n'), text.replaceAll('\n', '\r'), text.replaceAll(' ', '\t'), text.replaceAll('  ', ' ')]);
    case 11: return mutateBytes(dice, Buffer.from(text, 'utf8'), { seeds: o.seeds.map((s) => Buffer.from(s, 'utf8')), maxBytes: text.length + 1024 }).toString('utf8');
    default: lines.splice(at, 0, dice.pick(o.tokens)); break;
  }
  return lines.join('\n');
}

/** A mutated copy of `text`: 1–4 stacked line-level mutations. */
export function mutateText(dice: Dice, text: string, options: TextMutationOptions): string {
  let out = text;
  for (let rounds = dice.range(1, 4); rounds > 0; rounds--) out = mutateOnce(dice, out, options);
  return out;
}

/** `text` cut to `maxChars` with escapes visible, for failure messages. */
export function showText(text: string, maxChars = 2000): string {
  const shown = JSON.stringify(text.length > maxChars ? text.slice(0, maxChars) : text);
  return `${text.length} characters: ${shown}${text.length > maxChars ? '…' : ''}`;
}
