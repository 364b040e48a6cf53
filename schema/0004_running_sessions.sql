-- tl schema, version 4: an index of the running sessions only, so that every
-- open for writing, which looks for sessions left running by a collector that
-- is gone (tl_store_recover_stale), reads the few running ones instead of
-- scanning every session the file holds. A session leaves the index when it
-- ends. Applied by tl on open, never by hand.
CREATE INDEX IF NOT EXISTS sessions_running ON sessions(id) WHERE status = 'running';
