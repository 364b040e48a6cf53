-- tl schema, version 1: hosts, sessions, their tags and host facts, and the
-- raw samples of every session, stored in compressed blocks (see docs/schema.md).

CREATE TABLE hosts (
  id          INTEGER PRIMARY KEY,
  fingerprint TEXT NOT NULL UNIQUE,   -- stable identity, see docs/schema.md
  hostname    TEXT NOT NULL,
  first_seen  INTEGER NOT NULL,       -- unix time, nanoseconds, UTC
  last_seen   INTEGER NOT NULL
);

CREATE TABLE sessions (
  id             INTEGER PRIMARY KEY,
  uuid           TEXT NOT NULL UNIQUE,
  run_uuid       TEXT NOT NULL,         -- sessions collected by one tlcollect run
  host_id        INTEGER NOT NULL REFERENCES hosts(id),
  label          TEXT NOT NULL,
  probe          TEXT NOT NULL,
  delay_ns       INTEGER NOT NULL CHECK (delay_ns >= 0),
  warmup         INTEGER NOT NULL CHECK (warmup >= 0),
  started_ns     INTEGER NOT NULL,
  ended_ns       INTEGER,               -- NULL while running
  heartbeat_ns   INTEGER NOT NULL,      -- last commit of samples
  pid            INTEGER NOT NULL,      -- collector process, to spot stale sessions
  status         TEXT NOT NULL CHECK (status IN ('running', 'complete', 'interrupted')),
  sample_count   INTEGER NOT NULL DEFAULT 0,
  missed_periods INTEGER NOT NULL DEFAULT 0,
  tl_version     TEXT NOT NULL,
  libuv_version  TEXT NOT NULL,
  command_line   TEXT NOT NULL
);
CREATE INDEX sessions_label ON sessions(label, delay_ns);
CREATE INDEX sessions_run ON sessions(run_uuid);

CREATE TABLE session_tags (
  session_id INTEGER NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
  key        TEXT NOT NULL,
  value      TEXT NOT NULL,
  PRIMARY KEY (session_id, key)
) WITHOUT ROWID;

-- What the host looked like when the session ran: one row per detected fact,
-- with the evidence it was read from.
CREATE TABLE host_facts (
  session_id INTEGER NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
  key        TEXT NOT NULL,
  value      TEXT NOT NULL,
  evidence   TEXT NOT NULL DEFAULT '',
  PRIMARY KEY (session_id, key)
) WITHOUT ROWID;

-- Raw samples, in order, as blocks of up to 4096 latencies in nanoseconds.
-- codec 1: each sample is an unsigned LEB128 varint of (latency - min_ns).
-- codec 2 (written since): each (latency - min_ns) bit-packed at one width,
-- the wider ones patched from a list of (position, high bits); the layout
-- byte by byte is in docs/schema.md and store/codec.c.
CREATE TABLE sample_blocks (
  session_id  INTEGER NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
  seq         INTEGER NOT NULL,         -- 0, 1, 2 ... within the session
  count       INTEGER NOT NULL CHECK (count > 0),
  min_ns      INTEGER NOT NULL,
  max_ns      INTEGER NOT NULL,
  codec       INTEGER NOT NULL,
  data        BLOB NOT NULL,
  PRIMARY KEY (session_id, seq)
);
