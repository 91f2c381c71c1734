/**
 * @module The erase record routes of the management API (mounted under `/api/v1` through
 * api.ts's `extraRoutes`, behind its token rule and JSON errors):
 * - `GET /erase-records[?host=NAME]` → `{ items: EraseRecord[] }`, newest first;
 * - `GET /erase-records/signing-key` → `{ publicKey, fingerprint, namespace, principal,
 *   allowedSigners }`: the key to trust, and the `allowed_signers` line for `ssh-keygen -Y verify`;
 * - `GET /erase-records/:id` → the record's signed text, byte for byte (`application/json`);
 * - `GET /erase-records/:id/signature` → its SSHSIG signature (`text/plain`, armored).
 */
import express, { type NextFunction, type Request, type RequestHandler, type Response } from 'express';
import { NotFoundError, ValidationError } from '../errors.js';
import type { EraseRecordBook } from './book.js';
import { ERASE_RECORD_NAMESPACE } from './record.js';

function route(handler: (req: Request, res: Response) => Promise<void>): RequestHandler {
  return (req: Request, res: Response, next: NextFunction) => {
    handler(req, res).catch(next);
  };
}

/**
 * The `allowed_signers` line (ssh-keygen(1) "ALLOWED SIGNERS") that trusts `publicKey` as
 * `principal` for erase records only.
 */
export function allowedSignersLine(principal: string, publicKey: string): string {
  const [type = '', blob = ''] = publicKey.split(' ');
  return `${principal} namespaces="${ERASE_RECORD_NAMESPACE}" ${type} ${blob}`;
}

/** Builds the erase record router for agent `agentId` (its id is the signer principal). */
export function createEraseRecordRouter(book: EraseRecordBook, agentId: string): express.Router {
  const router = express.Router();
  const signed = async (req: Request): Promise<{ document: string; signature: string }> => {
    const id = String(req.params.id);
    const found = await book.get(id);
    if (found === undefined) throw new NotFoundError('EraseRecord', id);
    return found;
  };
  router.get('/erase-records', route(async (req, res) => {
    const host: unknown = (req.query as Record<string, unknown>).host;
    if (host !== undefined && typeof host !== 'string') throw new ValidationError('query.host', 'must be given once, as a plain value');
    res.json({ items: await book.list(host === undefined || host === '' ? {} : { host }) });
  }));
  router.get('/erase-records/signing-key', (_req, res) => {
    const { publicKey, fingerprint } = book.signingKey;
    res.json({ publicKey, fingerprint, namespace: ERASE_RECORD_NAMESPACE, principal: agentId, allowedSigners: allowedSignersLine(agentId, publicKey) });
  });
  router.get('/erase-records/:id', route(async (req, res) => {
    res.type('application/json; charset=utf-8').send((await signed(req)).document);
  }));
  router.get('/erase-records/:id/signature', route(async (req, res) => {
    res.type('text/plain; charset=utf-8').send((await signed(req)).signature);
  }));
  return router;
}
