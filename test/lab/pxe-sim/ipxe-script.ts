/**
 * @module What a simulated iPXE takes from a boot script: the kernel and initrd URLs of its
 * `kernel` and `initrd` lines (the forms rackside and the reference script use), skipping
 * `--name x` / `-n x` style options and the kernel command line, resolved against the
 * script's own URL (iPXE resolves
 * relative URIs against the current working URI, RFC 3986 §5). Lines after the first `boot`
 * and labelled retry sections are not followed: the first `kernel` and the `initrd`s before the
 * first `boot` are what iPXE loads on the success path. Lines with `${…}` settings are refused:
 * the simulator does not expand iPXE settings.
 * @pure
 */

/** The images a script loads. */
export interface ScriptImages {
  kernel: string;
  initrds: string[];
}

/** Why a script cannot be followed. */
export class ScriptParseError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ScriptParseError';
  }
}

/** Options of `kernel`/`initrd` (iPXE `imgfetch` family) that take a value. */
const OPTIONS_WITH_VALUE = new Set(['--name', '-n', '--timeout', '-t']);

/** The first non-option word after the command (the image URI), or undefined. */
function imageUri(words: readonly string[]): string | undefined {
  for (let i = 1; i < words.length; i++) {
    const w = words[i] ?? '';
    if (w.startsWith('-')) {
      if (OPTIONS_WITH_VALUE.has(w)) i++;
      continue;
    }
    return w;
  }
  return undefined;
}

function resolveAgainst(uri: string, scriptUrl: string): string {
  if (uri.includes('${')) throw new ScriptParseError(`image URI ${JSON.stringify(uri)} uses iPXE settings, which the simulator does not expand`);
  try {
    return new URL(uri, scriptUrl).href;
  } catch {
    throw new ScriptParseError(`image URI ${JSON.stringify(uri)} is not a URL relative to ${scriptUrl}`);
  }
}

/** Parses `text` fetched from `scriptUrl` (see the module comment); throws {@link ScriptParseError}. */
export function parseBootScript(text: string, scriptUrl: string): ScriptImages {
  const lines = text.split(/\r?\n/);
  if (!(lines[0] ?? '').startsWith('#!ipxe')) throw new ScriptParseError(`not an iPXE script (first line ${JSON.stringify((lines[0] ?? '').slice(0, 60))})`);
  let kernel: string | undefined;
  const initrds: string[] = [];
  for (const raw of lines.slice(1)) {
    // `cmd || goto failed` and `cmd && x`: only the command itself matters on the success path.
    const line = (raw.split(/\s(?:\|\||&&)\s/)[0] ?? '').trim();
    if (line === '' || line.startsWith('#') || line.startsWith(':')) continue;
    const words = line.split(/\s+/);
    const command = words[0];
    if (command === 'boot') break;
    if (command === 'kernel' && kernel === undefined) {
      const uri = imageUri(words);
      if (uri === undefined) throw new ScriptParseError(`kernel line without an image: ${JSON.stringify(line)}`);
      kernel = resolveAgainst(uri, scriptUrl);
    } else if (command === 'initrd' && kernel !== undefined) {
      const uri = imageUri(words);
      if (uri === undefined) throw new ScriptParseError(`initrd line without an image: ${JSON.stringify(line)}`);
      initrds.push(resolveAgainst(uri, scriptUrl));
    }
  }
  if (kernel === undefined) throw new ScriptParseError('the script loads no kernel (a "nothing to do" or local-disk script?)');
  return { kernel, initrds };
}
