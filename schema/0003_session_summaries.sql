-- tl schema, version 3: a summary per finished session (count, extremes,
-- sums, a log-linear histogram and the session's own exact percentiles, as
-- a blob with a version byte and a CRC32C; see docs/schema.md), so that a
-- report learns them without reading the samples. tl writes one when a
-- session ends, is merged or imported. tl_session_summary, a function tl
-- registers on its own connections, computes one from a session's blocks,
-- or NULL when they do not read back whole: such a session gets none and is
-- summarised from its samples when read (and fails there, as it did before).
-- Applied by tl on open, never by hand.
CREATE TABLE session_summaries (
  session_id INTEGER PRIMARY KEY REFERENCES sessions(id) ON DELETE CASCADE,
  data       BLOB NOT NULL
);
INSERT INTO session_summaries (session_id, data)
SELECT id, summary FROM (SELECT id, tl_session_summary(id) AS summary FROM sessions
                         WHERE status <> 'running')
WHERE summary IS NOT NULL;
