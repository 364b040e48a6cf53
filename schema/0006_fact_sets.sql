-- tl schema, version 6: host facts shared by a host's sessions while they do
-- not change (docs/schema.md, "Host facts"). The facts a session starts with
-- go in a fact set of its host (fact_sets: the host, the set's number within
-- the host, and its facts), which the host's next session takes again when
-- its facts are the same; sessions.fact_set_id is that number. host_facts
-- keeps the facts added to one session later (the load at its end, what a
-- probe learnt), which win over the set's of the same key. The view
-- session_facts is every fact of a session, as host_facts was. One table, so
-- that a new file grows by one page. tl adds sessions.fact_set_id before
-- this script and moves the facts of existing sessions into sets after it,
-- in the same transaction. Applied by tl on open, never by hand.
CREATE TABLE IF NOT EXISTS fact_sets (
  host_id  INTEGER NOT NULL REFERENCES hosts(id),
  id       INTEGER NOT NULL,
  key      TEXT NOT NULL,
  value    TEXT NOT NULL,
  evidence TEXT NOT NULL DEFAULT '',
  PRIMARY KEY (host_id, id, key)
) WITHOUT ROWID;
CREATE VIEW IF NOT EXISTS session_facts (session_id, key, value, evidence) AS
  SELECT session_id, key, value, evidence FROM host_facts
  UNION ALL
  SELECT s.id, f.key, f.value, f.evidence FROM sessions s
  JOIN fact_sets f ON f.host_id = s.host_id AND f.id = s.fact_set_id
  WHERE NOT EXISTS (SELECT 1 FROM host_facts h WHERE h.session_id = s.id AND h.key = f.key);
