/**
 * @module `POST /api/v1/hosts/:name/enroll` on the management API (`rackside enroll NAME`,
 * docs/discovery.md, docs/cli.md): gives a host without a BMC its BMC — the one discovery
 * proposed (body `{}`), or `{bmcAddress, username, password}` for hosts without an in-band path.
 * Answers 202 with the host (which carries no password: the credentials are in its Secret).
 * Unknown or mistyped fields are a 400 naming them. The body is never logged.
 */
import express, { type NextFunction, type Request, type Response, type Router } from 'express';
import { ValidationError } from '../errors.js';
import { isJsonObject } from '../json-value.js';
import type { EnrollInput } from './bmc-enrollment.js';
import type { DiscoveryService } from './discovery-service.js';

const FIELDS = ['bmcAddress', 'username', 'password'] as const;

/** Decodes the enroll body; throws ValidationError naming the bad field. */
export function decodeEnrollBody(body: unknown): EnrollInput {
  const input = body === undefined || body === null ? {} : body;
  if (!isJsonObject(input)) throw new ValidationError('body', 'must be a JSON object');
  for (const key of Object.keys(input)) {
    if (!(FIELDS as readonly string[]).includes(key)) throw new ValidationError(key === '' ? '[""]' : key, `unknown field; expected ${FIELDS.join(', ')}`);
  }
  const out: EnrollInput = {};
  for (const key of FIELDS) {
    const value = input[key];
    if (value === undefined) continue;
    if (typeof value !== 'string' || value.trim() === '' || value.length > 2048) throw new ValidationError(key, 'must be a non-empty string');
    if (key === 'bmcAddress') out.address = value.trim();
    else out[key] = key === 'password' ? value : value.trim();
  }
  if (out.address === undefined && (out.username !== undefined || out.password !== undefined)) {
    throw new ValidationError('bmcAddress', 'username and password go with a bmcAddress');
  }
  return out;
}

/** Mounts the route on the management API router. */
export function mountEnrollRoute(api: Router, service: DiscoveryService): void {
  api.post('/hosts/:name/enroll', express.json({ limit: 64 * 1024 }), (req: Request, res: Response, next: NextFunction) => {
    const name = String(req.params.name ?? '');
    Promise.resolve()
      .then(() => service.enroll(name, decodeEnrollBody(req.body)))
      .then((host) => { res.status(202).json(host); }, next);
  });
}
