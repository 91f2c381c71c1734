-- rackside fleet controller, schema version 2 (docs/controller.md, "Rack credentials").
-- A rack authenticates either by its token (auth = 'token': token_sha256 holds the hash) or by a
-- client certificate whose subject CN is its name (auth = 'cert': token_sha256 stays NULL).
-- Revocation is revoked_at, for both kinds (before this version a NULL token_sha256 meant revoked,
-- and revoke always set both, so existing rows keep their meaning).
ALTER TABLE racks ADD COLUMN auth text NOT NULL DEFAULT 'token' CHECK (auth IN ('token', 'cert'));
UPDATE racks SET revoked_at = now() WHERE token_sha256 IS NULL AND revoked_at IS NULL;
