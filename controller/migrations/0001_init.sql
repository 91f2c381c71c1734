-- rackside fleet controller, schema version 1 (docs/controller.md, "Ingest").
-- Applied once, in one transaction, by controller/db/migrate.ts under an advisory lock.

-- One row per rack. The token is stored only as its SHA-256; a NULL token_sha256 is a revoked rack.
-- Pushes lock their rack's row (SELECT … FOR UPDATE): racks never wait on each other.
CREATE TABLE racks (
  id             bigserial PRIMARY KEY,
  name           text NOT NULL UNIQUE,
  token_sha256   bytea UNIQUE,
  created_at     timestamptz NOT NULL DEFAULT now(),
  revoked_at     timestamptz,
  agent_id       text,
  stream_id      text,
  last_sequence  bigint,
  last_push_at   timestamptz,
  last_sent_at   timestamptz,
  agent_version  text,
  status_url     text,
  backlog_hosts  integer,
  backlog_events integer,
  wire_version   integer,
  boot_services  jsonb,
  pushes         bigint NOT NULL DEFAULT 0,
  resets         integer NOT NULL DEFAULT 0
);

-- Every stream a rack's agent has pushed on; a second stream for one agent is a state reset.
CREATE TABLE rack_streams (
  rack_id    bigint NOT NULL REFERENCES racks (id) ON DELETE CASCADE,
  agent_id   text NOT NULL,
  stream_id  text NOT NULL,
  first_at   timestamptz NOT NULL DEFAULT now(),
  is_reset   boolean NOT NULL,
  PRIMARY KEY (rack_id, agent_id, stream_id)
);

-- The idempotency ledger: one row per applied batch (agent, stream, sequence).
CREATE TABLE applied_batches (
  rack_id     bigint NOT NULL REFERENCES racks (id) ON DELETE CASCADE,
  agent_id    text NOT NULL,
  stream_id   text NOT NULL,
  sequence    bigint NOT NULL,
  applied_at  timestamptz NOT NULL DEFAULT now(),
  hosts       integer NOT NULL,
  events      integer NOT NULL,
  PRIMARY KEY (rack_id, agent_id, stream_id, sequence)
);

-- The newest summary of each host of each rack. deleted_at marks a host the rack deleted.
CREATE TABLE hosts (
  rack_id            bigint NOT NULL REFERENCES racks (id) ON DELETE CASCADE,
  namespace          text NOT NULL,
  name               text NOT NULL,
  stream_id          text NOT NULL,
  resource_version   numeric NOT NULL,
  state              text NOT NULL,
  operational_status text NOT NULL,
  error_type         text NOT NULL,
  error_message      text NOT NULL,
  boot_mac           text,
  serial_number      text,
  summary            jsonb NOT NULL,
  updated_at         timestamptz NOT NULL DEFAULT now(),
  deleted_at         timestamptz,
  PRIMARY KEY (rack_id, namespace, name)
);
CREATE INDEX hosts_name ON hosts (lower(name) text_pattern_ops);
CREATE INDEX hosts_state ON hosts (state);
CREATE INDEX hosts_errors ON hosts (rack_id) WHERE error_type <> '' AND deleted_at IS NULL;
CREATE INDEX hosts_mac ON hosts (boot_mac);
CREATE INDEX hosts_serial ON hosts (lower(serial_number));

-- Host-related events, appended; retained by age and by count per rack (controller/retention.ts).
CREATE TABLE events (
  id          bigserial PRIMARY KEY,
  rack_id     bigint NOT NULL REFERENCES racks (id) ON DELETE CASCADE,
  stream_id   text NOT NULL,
  seq         bigint NOT NULL,
  time        timestamptz NOT NULL,
  type        text NOT NULL,
  reason      text NOT NULL,
  message     text NOT NULL,
  host        text,
  mac         text,
  source      text NOT NULL,
  received_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX events_rack ON events (rack_id, id);
CREATE INDEX events_host ON events (rack_id, host, id);
CREATE INDEX events_time ON events (time);

-- Work queued for a rack: queued → delivered → done | failed, or expired before delivery.
CREATE TABLE commands (
  id            uuid PRIMARY KEY,
  rack_id       bigint NOT NULL REFERENCES racks (id) ON DELETE CASCADE,
  kind          text NOT NULL,
  host          text,
  namespace     text,
  body          jsonb NOT NULL,
  state         text NOT NULL CHECK (state IN ('queued', 'delivered', 'done', 'failed', 'expired')),
  created_at    timestamptz NOT NULL DEFAULT now(),
  expires_at    timestamptz NOT NULL,
  delivered_at  timestamptz,
  deliveries    integer NOT NULL DEFAULT 0,
  finished_at   timestamptz,
  error         text,
  result        jsonb
);
CREATE INDEX commands_pending ON commands (rack_id, created_at) WHERE state IN ('queued', 'delivered');
CREATE INDEX commands_created ON commands (created_at);
