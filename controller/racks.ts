/**
 * @module Rack credentials: `rackside controller racks add NAME` makes a rack and its token
 * (32 random bytes, base64url, shown once), stored only as its SHA-256; `revoke` clears the hash
 * and marks the rack revoked (the rack and its rows stay); `rotate` issues a new token. A push
 * presents the token as a bearer token and is matched by hash, so the database never holds a
 * usable credential. A rack added or rotated with auth `cert` has no token: it authenticates by a
 * client certificate (verified against the controller's `tls.clientCA`) whose subject CN is its
 * name (push-route.ts); revoking it refuses every certificate naming it until it is rotated.
 */
import { createHash, randomBytes } from 'node:crypto';
import type pg from 'pg';

/** Prefix of every rack token, so a leaked one is recognisable (secret scanners, logs). */
export const RACK_TOKEN_PREFIX = 'rsk_';

/** Rack names: DNS-label-like, 1–63 characters. */
export const RACK_NAME = /^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$/;

/** A fresh token (prefix + 32 random bytes, base64url). */
export function newRackToken(): string {
  return `${RACK_TOKEN_PREFIX}${randomBytes(32).toString('base64url')}`;
}

/** SHA-256 of a token, as stored. */
export function tokenDigest(token: string): Buffer {
  return createHash('sha256').update(token, 'utf8').digest();
}

/** How a rack authenticates its pushes: a bearer token, or a client certificate naming it. */
export type RackAuth = 'token' | 'cert';

/** A rack's identity as found by its credential. */
export interface RackIdentity {
  id: string;
  name: string;
}

/** A rack-credential operation that cannot be done (exists, unknown name, bad name). */
export class RackError extends Error {
  readonly status: number;
  constructor(status: number, message: string) {
    super(message);
    this.name = 'RackError';
    this.status = status;
  }
}

function checkName(name: string): void {
  if (!RACK_NAME.test(name)) throw new RackError(400, `rack name ${JSON.stringify(name)}: expected 1–63 lower-case letters, digits and dashes`);
}

/** Creates rack `name`; resolves with its token (the only time it is seen). @throws RackError 409 when it exists */
export async function addRack(pool: pg.Pool, name: string): Promise<string> {
  checkName(name);
  const token = newRackToken();
  const res = await pool.query('INSERT INTO racks (name, token_sha256) VALUES ($1, $2) ON CONFLICT (name) DO NOTHING', [name, tokenDigest(token)]);
  if (res.rowCount !== 1) throw new RackError(409, `rack ${name} exists (use "racks rotate ${name}" for a new token)`);
  return token;
}

/** Creates rack `name` that authenticates only by a client certificate whose subject CN is `name` (it has no token). @throws RackError 409 when it exists */
export async function addCertRack(pool: pg.Pool, name: string): Promise<void> {
  checkName(name);
  const res = await pool.query("INSERT INTO racks (name, auth) VALUES ($1, 'cert') ON CONFLICT (name) DO NOTHING", [name]);
  if (res.rowCount !== 1) throw new RackError(409, `rack ${name} exists (use "racks rotate ${name} --auth cert" to switch it to certificates)`);
}

/** Issues a new token for `name` (the old one stops working, a revoked rack works again, a certificate rack becomes a token rack). @throws RackError 404 */
export async function rotateRack(pool: pg.Pool, name: string): Promise<string> {
  checkName(name);
  const token = newRackToken();
  const res = await pool.query("UPDATE racks SET token_sha256 = $2, auth = 'token', revoked_at = NULL WHERE name = $1", [name, tokenDigest(token)]);
  if (res.rowCount !== 1) throw new RackError(404, `no rack named ${name}`);
  return token;
}

/** Makes `name` a certificate rack: its token (if any) stops working, a revoked rack works again. @throws RackError 404 */
export async function rotateRackToCert(pool: pg.Pool, name: string): Promise<void> {
  checkName(name);
  const res = await pool.query("UPDATE racks SET token_sha256 = NULL, auth = 'cert', revoked_at = NULL WHERE name = $1", [name]);
  if (res.rowCount !== 1) throw new RackError(404, `no rack named ${name}`);
}

/** Revokes `name`'s credential (token or certificate): its pushes get 401 from now on; its rows stay. @throws RackError 404 */
export async function revokeRack(pool: pg.Pool, name: string): Promise<void> {
  checkName(name);
  const res = await pool.query('UPDATE racks SET token_sha256 = NULL, revoked_at = now() WHERE name = $1', [name]);
  if (res.rowCount !== 1) throw new RackError(404, `no rack named ${name}`);
}

/** The rack a token belongs to, or undefined (unknown or revoked; a certificate rack has no token). */
export async function rackByToken(pool: pg.Pool, token: string): Promise<RackIdentity | undefined> {
  const res = await pool.query<{ id: string; name: string }>('SELECT id::text AS id, name FROM racks WHERE token_sha256 = $1', [tokenDigest(token)]);
  return res.rows[0];
}

/** Names, creation times, revocation and credential kind of every rack (for `racks list`). */
export async function listRackCredentials(pool: pg.Pool): Promise<{ name: string; createdAt: string; revoked: boolean; auth: RackAuth }[]> {
  const res = await pool.query<{ name: string; created_at: Date; revoked: boolean; auth: RackAuth }>('SELECT name, created_at, revoked_at IS NOT NULL AS revoked, auth FROM racks ORDER BY name');
  return res.rows.map((r) => ({ name: r.name, createdAt: r.created_at.toISOString(), revoked: r.revoked, auth: r.auth }));
}
