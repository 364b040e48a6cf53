-- tl schema, version 5: why samples were late (docs/schema.md, "Causes").
-- One table, so that a new file grows by one page: per session, rows of four kinds, each a compact
-- blob of unsigned varints closed by a CRC32C (store/causes.c):
--   kind 0: what the measuring thread read about itself around the slowest
--           few samples (tl keeps the slowest 3 per hundred), first_index
--           the first sample's place, count how many;
--   kind 1: the totals over every sample whose causes were read (one row);
--   kind 2: the session's per-second counters (steal, IRQ, context
--           switches, PSI, the cgroup's throttling, frequency), at most 2048
--           rows, coarser for long sessions (one row);
--   kind 3: every measured sample's run-queue wait summed by latency band
--           (eight bands a doubling), count the bands with samples (one row).
-- Applied by tl on open, never by hand.
CREATE TABLE IF NOT EXISTS session_causes (
  session_id  INTEGER NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
  kind        INTEGER NOT NULL,
  first_index INTEGER NOT NULL,
  count       INTEGER NOT NULL,
  data        BLOB NOT NULL,
  PRIMARY KEY (session_id, kind, first_index)
) WITHOUT ROWID;
