-- tl server schema, version 1 (PostgreSQL): the tables of a tl database file
-- (schema/0001_init.sql), holding the finished sessions that collectors push.
-- Sessions arrive whole, in one transaction each, and are never 'running';
-- each is identified by its UUID, so pushing one twice stores it once.

-- Which tl wrote this database, and at what schema version (one row).
CREATE TABLE tl_schema (
  application text NOT NULL CHECK (application = 'tl'),
  version     integer NOT NULL
);
INSERT INTO tl_schema (application, version) VALUES ('tl', 0);

CREATE TABLE hosts (
  id          bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  fingerprint text NOT NULL UNIQUE,
  hostname    text NOT NULL,
  first_seen  bigint NOT NULL,        -- unix time, nanoseconds, UTC
  last_seen   bigint NOT NULL
);

CREATE TABLE sessions (
  id             bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  uuid           text NOT NULL UNIQUE,
  run_uuid       text NOT NULL,
  host_id        bigint NOT NULL REFERENCES hosts(id),
  label          text NOT NULL,
  probe          text NOT NULL,
  delay_ns       bigint NOT NULL CHECK (delay_ns >= 0),
  warmup         bigint NOT NULL CHECK (warmup >= 0),
  started_ns     bigint NOT NULL,
  ended_ns       bigint NOT NULL,
  status         text NOT NULL CHECK (status IN ('complete', 'interrupted')),
  sample_count   bigint NOT NULL,
  missed_periods bigint NOT NULL,
  tl_version     text NOT NULL,
  libuv_version  text NOT NULL,
  command_line   text NOT NULL
);
CREATE INDEX sessions_label ON sessions(label, delay_ns);
CREATE INDEX sessions_started ON sessions(started_ns, id);
CREATE INDEX sessions_host ON sessions(host_id);

CREATE TABLE session_tags (
  session_id bigint NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
  key        text NOT NULL,
  value      text NOT NULL,
  PRIMARY KEY (session_id, key)
);

CREATE TABLE host_facts (
  session_id bigint NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
  key        text NOT NULL,
  value      text NOT NULL,
  evidence   text NOT NULL DEFAULT '',
  PRIMARY KEY (session_id, key)
);

-- The blocks of the sample codec, byte for byte as in the file. They are
-- compressed already: EXTERNAL storage keeps PostgreSQL from trying again.
CREATE TABLE sample_blocks (
  session_id bigint NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
  seq        bigint NOT NULL,
  count      bigint NOT NULL CHECK (count > 0),
  min_ns     bigint NOT NULL,
  max_ns     bigint NOT NULL,
  codec      bigint NOT NULL,
  data       bytea NOT NULL,
  PRIMARY KEY (session_id, seq)
);
ALTER TABLE sample_blocks ALTER COLUMN data SET STORAGE EXTERNAL;
