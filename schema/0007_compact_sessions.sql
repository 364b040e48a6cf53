-- tl schema, version 7: smaller session rows (docs/schema.md, "Session
-- UUIDs"). A session's UUID and its run's, when tl made them, are stored as
-- their 16 bytes (a BLOB) instead of 36 characters; tl_uuid_blob, a function
-- tl registers on its own connection for the migration, leaves any other
-- text as it is. And no index on sessions.run_uuid: no query of tl looks
-- sessions up by their run (a report groups by run the sessions it has
-- read). Together about 110 bytes a session, 0.11 bytes a sample in a
-- fleet of 1,000-sample sessions. The server schema (schema/pg) keeps text
-- and never had the index. Applied by tl on open, never by hand.
DROP INDEX IF EXISTS sessions_run;
UPDATE sessions SET uuid = tl_uuid_blob(uuid), run_uuid = tl_uuid_blob(run_uuid)
WHERE typeof(uuid) = 'text' OR typeof(run_uuid) = 'text';
