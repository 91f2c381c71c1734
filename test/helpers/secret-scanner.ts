/**
 * @module A byte scanner for secrets in everything a test run printed and stored: each secret
 * becomes a set of needles — its random core (raw, upper-case), its base64 and base64url
 * encodings at all three byte alignments (so the secret is found inside a longer encoded value,
 * e.g. `Authorization: Basic base64(user:password)`), and its hex encoding — and every artifact
 * (a named byte buffer: a log, a CLI output, an API answer, a file, a database entry) is searched
 * for every needle. Matching on the random core also catches the URL-encoded, JSON-escaped,
 * quoted and shell-escaped forms of the secret, which keep the core verbatim. Also collects
 * artifacts: every file under a directory, every entry of a LevelDB database.
 */
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Level } from 'level';

/** One secret to look for. `core` is its random part (a substring of `value`, ≥ 12 characters). */
export interface Secret {
  /** What it is, for messages: `BMC password of node-a`. */
  readonly name: string;
  readonly value: string;
  readonly core: string;
}

/** A named buffer of what the run printed or stored. */
export interface Artifact {
  /** Where it came from: `agent stdout+stderr`, `GET /api/v1/hosts`, `file state/db/000005.log` … */
  readonly place: string;
  readonly bytes: Buffer;
}

/** One needle found in one artifact. */
export interface Hit {
  readonly secret: string;
  readonly form: string;
  readonly place: string;
  readonly offset: number;
  /** Printable bytes around the hit. */
  readonly context: string;
}

/** One searchable encoding of a secret. */
export interface Needle {
  readonly form: string;
  readonly bytes: Buffer;
}

/** Makes a canary `<prefix>-<hex core><suffix>` with `random` supplying the `coreBytes` (≥ 6) bytes of the core. */
export function makeCanary(name: string, prefix: string, random: (size: number) => Buffer, options: { coreBytes?: number; suffix?: string } = {}): Secret {
  const core = random(options.coreBytes ?? 8).toString('hex');
  const suffix = options.suffix ?? '';
  return { name, value: `${prefix}-${core}${suffix}`, core };
}

/**
 * The base64 encodings of `bytes` at byte offsets 0, 1 and 2 inside a longer value, each cut to
 * the characters that do not depend on the neighbouring bytes.
 */
function base64Alignments(bytes: Buffer, alphabet: 'base64' | 'base64url'): string[] {
  const out: string[] = [];
  for (let lead = 0; lead < 3; lead++) {
    const encoded = Buffer.concat([Buffer.alloc(lead), bytes]).toString(alphabet).replace(/=+$/, '');
    const start = lead === 0 ? 0 : 4; // the first 4-character group carries the leading bytes
    const fullGroups = Math.floor((lead + bytes.length) / 3) * 4; // a partial last group depends on what follows
    out.push(encoded.slice(start, fullGroups));
  }
  return out;
}

/** Every needle of `secret` (see the module comment). */
export function needlesOf(secret: Secret): Needle[] {
  if (!secret.value.includes(secret.core) || secret.core.length < 12) throw new RangeError(`${secret.name}: the core must be a substring of at least 12 characters`);
  const needles = new Map<string, string>();
  needles.set(secret.core, 'raw');
  needles.set(secret.core.toUpperCase(), 'raw upper-case');
  for (const [what, text] of [['value', secret.value], ['core', secret.core]] as const) {
    const bytes = Buffer.from(text, 'utf8');
    for (const alphabet of ['base64', 'base64url'] as const) {
      base64Alignments(bytes, alphabet).forEach((b, lead) => {
        if (b.length >= 12 && !needles.has(b)) needles.set(b, `${alphabet} of the ${what} (offset ${lead})`);
      });
    }
    needles.set(bytes.toString('hex'), `hex of the ${what}`);
    needles.set(bytes.toString('hex').toUpperCase(), `HEX of the ${what}`);
  }
  return [...needles].map(([text, form]) => ({ form, bytes: Buffer.from(text, 'latin1') }));
}

function printable(bytes: Buffer): string {
  return bytes.toString('latin1').replace(/[^\x20-\x7e]/g, '.');
}

/**
 * Searches every artifact for every needle of every secret; `allowed(secret, place)` exempts a
 * place where a secret belongs (e.g. the ramdisk token in the boot script that hands it over).
 */
export function scanArtifacts(artifacts: readonly Artifact[], secrets: readonly Secret[], allowed: (secret: Secret, place: string) => boolean = () => false): Hit[] {
  const hits: Hit[] = [];
  const needles = secrets.map((s) => ({ secret: s, needles: needlesOf(s) }));
  for (const artifact of artifacts) {
    for (const { secret, needles: forms } of needles) {
      if (allowed(secret, artifact.place)) continue;
      for (const needle of forms) {
        const offset = artifact.bytes.indexOf(needle.bytes);
        if (offset < 0) continue;
        const context = printable(artifact.bytes.subarray(Math.max(0, offset - 80), Math.min(artifact.bytes.length, offset + needle.bytes.length + 80)));
        hits.push({ secret: secret.name, form: needle.form, place: artifact.place, offset, context });
      }
    }
  }
  return hits;
}

/** One line per hit for an assertion message. */
export function formatHits(hits: readonly Hit[]): string {
  return hits.map((h) => `- ${h.secret} (${h.form}) in ${h.place} at byte ${h.offset}: …${h.context}…`).join('\n');
}

/**
 * Every regular file under `root` (recursively; sockets and other special files skipped) as an
 * artifact named `<label>/<relative path>`.
 */
export async function collectFiles(root: string, label: string): Promise<Artifact[]> {
  const out: Artifact[] = [];
  const walk = async (dir: string, rel: string): Promise<void> => {
    for (const entry of await readdir(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      const name = rel === '' ? entry.name : `${rel}/${entry.name}`;
      if (entry.isDirectory()) await walk(path, name);
      else if (entry.isFile()) out.push({ place: `file ${label}/${name}`, bytes: await readFile(path) });
    }
  };
  await walk(root, '');
  return out;
}

/**
 * Every key and value of the LevelDB database at `path` (opened after its owner closed it), one
 * artifact per entry named `leveldb <sublevel> <key>`: what the database holds once decompressed
 * (the table files on disk are Snappy-compressed).
 */
export async function dumpLevelDb(path: string): Promise<Artifact[]> {
  const db = new Level<Buffer, Buffer>(path, { keyEncoding: 'buffer', valueEncoding: 'buffer', createIfMissing: false });
  await db.open();
  const out: Artifact[] = [];
  try {
    for await (const [key, value] of db.iterator()) {
      const text = key.toString('utf8');
      const match = /^!([^!]*)!(.*)$/s.exec(text);
      out.push({ place: `leveldb ${match?.[1] ?? '(root)'} ${(match?.[2] ?? text).slice(0, 120)}`, bytes: Buffer.concat([key, Buffer.from('\n'), value]) });
    }
  } finally {
    await db.close();
  }
  return out;
}
