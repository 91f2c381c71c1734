/**
 * @module `POST /api/v1/racks/push`, the wire format's push endpoint (docs/sync-wire-format.md):
 * bearer rack token, or else a client certificate the TLS layer verified (its subject CN names
 * the rack) → gunzip (bounded) → strict decode (a 400 names the field) → ingest in one
 * transaction → `200 {"acknowledged": sequence, "commands": [...]}` only after COMMIT. A missing,
 * wrong or revoked credential, an unverified certificate, or a credential of another rack, is
 * 401 and writes nothing; a database that cannot be reached is 503 with `Retry-After`, so the
 * agent keeps the batch and retries.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { TLSSocket } from 'node:tls';
import type pg from 'pg';
import { decodePushRequest, SyncWireError, type PushRequest } from '../wire/index.js';
import { bearerToken, HttpError, readBody, sendJson } from './http-util.js';
import { ingestPush, PushUnauthorized, type IngestOutcome, type PushCredential } from './ingest.js';
import type { ControllerLog } from './log.js';
import type { ControllerMetrics } from './metrics.js';

/** Body limits: compressed on the wire, and decompressed. */
export const PUSH_LIMITS = { maxBytes: 32 * 1024 * 1024, maxDecoded: 64 * 1024 * 1024, maxAnswerBytes: 1024 * 1024 } as const;

/** What the push route needs. */
export interface PushRouteDeps {
  pool: pg.Pool;
  metrics: ControllerMetrics;
  log: ControllerLog;
}

const UNAUTHORIZED_HEADERS = { 'www-authenticate': 'Bearer realm="rackside-controller"' };

/**
 * The credential of a push: the bearer token when there is one, else the client certificate's
 * subject CN when the TLS layer verified the certificate against `tls.clientCA`.
 * @throws HttpError 401 (no credential, or a certificate that did not verify or names no rack)
 */
export function pushCredential(req: IncomingMessage): PushCredential {
  const token = bearerToken(req);
  if (token !== undefined) return { token };
  const socket = req.socket as Partial<TLSSocket>;
  const cert = typeof socket.getPeerCertificate === 'function' ? socket.getPeerCertificate() : undefined;
  if (cert === undefined || Object.keys(cert).length === 0) {
    throw new HttpError(401, 'missing "Authorization: Bearer <rack token>" header (or a rack client certificate)', 'Authorization', UNAUTHORIZED_HEADERS);
  }
  if (socket.authorized !== true) {
    const why = socket.authorizationError === undefined ? 'not verified' : String(socket.authorizationError);
    throw new HttpError(401, `the client certificate was not verified against the controller's tls.clientCA: ${why}`, 'certificate', UNAUTHORIZED_HEADERS);
  }
  // The subject CN names the rack (a CN given twice is an array: refused, never guessed).
  const subject = cert.subject as Partial<Record<string, unknown>> | undefined; // undefined for an empty subject
  const cn = subject?.CN;
  if (typeof cn !== 'string' || cn === '') throw new HttpError(401, 'the client certificate has no single subject CN naming a rack', 'certificate', UNAUTHORIZED_HEADERS);
  return { certificateRack: cn };
}

/** Decodes the body text into a push request, and checks what the database needs (numeric revisions). @throws HttpError 400 */
export function decodePushBody(body: Buffer): PushRequest {
  let json: unknown;
  try {
    json = JSON.parse(body.toString('utf8'));
  } catch (err) {
    throw new HttpError(400, `body is not JSON: ${err instanceof Error ? err.message : String(err)}`, 'body');
  }
  let push: PushRequest;
  try {
    push = decodePushRequest(json);
  } catch (err) {
    if (err instanceof SyncWireError) throw new HttpError(400, err.message, err.path);
    throw err;
  }
  const seen = new Set<string>();
  push.hosts.forEach((h, i) => {
    if (!/^\d{1,30}$/.test(h.resourceVersion)) throw new HttpError(400, `hosts[${i}].resourceVersion: expected decimal digits, got ${JSON.stringify(h.resourceVersion.slice(0, 40))}`, `hosts[${i}].resourceVersion`);
    const key = `${h.namespace}/${h.name}`;
    if (seen.has(key)) throw new HttpError(400, `hosts[${i}]: ${key} appears twice in one push`, `hosts[${i}].name`);
    seen.add(key);
  });
  const times: [string, string][] = [['sentAt', push.sentAt], ...push.events.map((e, i): [string, string] => [`events[${i}].time`, e.time]),
    ...(push.commandResults ?? []).map((c, i): [string, string] => [`commandResults[${i}].finishedAt`, c.finishedAt])];
  for (const [field, time] of times) if (time.startsWith('0000')) throw new HttpError(400, `${field}: year 0000 is not a date`, field);
  const bad = badString(push, '');
  if (bad !== undefined) throw new HttpError(400, `${bad}: NUL characters and unpaired surrogates are not accepted`, bad);
  return push;
}

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/** The path of the first string holding U+0000 or an unpaired surrogate (PostgreSQL stores neither), if any. */
function badString(value: unknown, path: string): string | undefined {
  if (typeof value === 'string') return value.includes('\u0000') || LONE_SURROGATE.test(value) ? path : undefined;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const found = badString(value[i], `${path}[${i}]`);
      if (found !== undefined) return found;
    }
    return undefined;
  }
  if (typeof value === 'object' && value !== null) {
    for (const [k, v] of Object.entries(value)) {
      const found = badString(k, path) ?? badString(v, path === '' ? k : `${path}.${k}`);
      if (found !== undefined) return found;
    }
  }
  return undefined;
}

function isDatabaseUnavailable(err: unknown): boolean {
  const code = (err as { code?: unknown } | undefined)?.code;
  if (typeof code !== 'string') return err instanceof Error && /Connection terminated|timeout|connect/i.test(err.message);
  // Class 08 (connection exception), 57P (operator intervention: shutdown), 53 (resources).
  return /^(08|57P|53)/.test(code) || ['ECONNREFUSED', 'ECONNRESET', 'ENOENT', 'ETIMEDOUT', 'EPIPE'].includes(code);
}

/** Handles one push request (the caller routed it here). Never throws. */
export async function handlePush(req: IncomingMessage, res: ServerResponse, deps: PushRouteDeps): Promise<void> {
  const started = performance.now();
  let result = 'error';
  try {
    const credential = pushCredential(req);
    const push = decodePushBody(await readBody(req, PUSH_LIMITS.maxBytes, PUSH_LIMITS.maxDecoded));
    let outcome: IngestOutcome;
    try {
      outcome = await ingestPush(deps.pool, credential, push, req.headers['user-agent'], { maxAnswerBytes: PUSH_LIMITS.maxAnswerBytes });
    } catch (err) {
      if (err instanceof PushUnauthorized) throw new HttpError(401, err.message, 'Authorization', UNAUTHORIZED_HEADERS);
      if (isDatabaseUnavailable(err)) {
        deps.log.warn({ err: String(err) }, 'push refused: the database is unavailable');
        throw new HttpError(503, 'the controller database is unavailable; retry later', '', { 'retry-after': '5' });
      }
      throw err;
    }
    result = outcome.duplicate ? 'duplicate' : 'applied';
    deps.metrics.recordIngest(outcome);
    if (outcome.reset) deps.log.info({ rack: outcome.rack, agentId: push.agentId, streamId: push.streamId }, 'rack state reset: a new stream');
    const answer = push.version >= 2 ? { acknowledged: push.sequence, commands: outcome.commands } : { acknowledged: push.sequence };
    sendJson(res, 200, answer);
  } catch (err) {
    if (err instanceof HttpError) {
      result = err.status === 401 ? 'unauthorized' : err.status === 503 ? 'unavailable' : 'invalid';
      sendJson(res, err.status, { error: { message: err.message, field: err.field } }, err.headers);
    } else {
      deps.log.error({ err: err instanceof Error ? err.stack ?? err.message : String(err) }, 'push failed');
      sendJson(res, 503, { error: { message: 'the controller could not apply the batch; retry later', field: '' } }, { 'retry-after': '5' });
    }
  } finally {
    deps.metrics.observePush(result, (performance.now() - started) / 1000);
  }
}
