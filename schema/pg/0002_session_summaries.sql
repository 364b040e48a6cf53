-- tl server schema, version 2: the summary of each session (docs/schema.md,
-- "Session summaries"), byte for byte as in a file, sent by tlstore push with
-- the session. Sessions pushed before have none and are summarised from
-- their samples when read.
CREATE TABLE session_summaries (
  session_id bigint PRIMARY KEY REFERENCES sessions(id) ON DELETE CASCADE,
  data       bytea NOT NULL
);
ALTER TABLE session_summaries ALTER COLUMN data SET STORAGE EXTERNAL;
