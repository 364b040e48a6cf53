-- tl server schema, version 3: why samples were late (docs/schema.md,
-- "Causes"), byte for byte the rows of a file's session_causes, sent by
-- tlstore push with the session. Sessions pushed before have none: their
-- samples are "not attributed".
CREATE TABLE session_causes (
  session_id  bigint NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
  kind        integer NOT NULL,
  first_index bigint NOT NULL,
  count       bigint NOT NULL,
  data        bytea NOT NULL,
  PRIMARY KEY (session_id, kind, first_index)
);
