-- A KB store written by kb.store.structured at SCHEMA_VERSION 1 (one card, one proposal), dumped with
-- sqlite3's iterdump; tests/kb/test_schema.py opens it with the current code.
BEGIN TRANSACTION;
CREATE TABLE card_versions (
  id TEXT NOT NULL, version INTEGER NOT NULL, kind TEXT NOT NULL, status TEXT NOT NULL,
  doc TEXT NOT NULL, created_at TEXT NOT NULL, PRIMARY KEY (id, version));
INSERT INTO "card_versions" VALUES('v1-card',1,'pattern','proposed','{"id":"v1-card","title":"A card stored by schema 1","summary":"Written by StructuredStore at SCHEMA_VERSION 1.","body":"","backends":["cuda"],"levels":["L1"],"symptoms":{"bottleneck_classes":[],"profile_signals":[],"ir_signatures":[],"code_features":[]},"preconditions":[],"rewrite":null,"interpretation":"","evidence":[],"sources":[],"related":[],"compiler_scope":[],"verification":[],"status":"proposed","version":1,"provenance":{"origin":"curated","rounds":[],"author":null},"stats":{"cited":0,"applied":0,"verified":0,"lift_mean":null,"lift_ci_low":null,"lift_ci_high":null,"lift_n":0},"kind":"pattern"}','2026-12-01T21:31:56.187605+00:00');
CREATE TABLE cards (
  id TEXT PRIMARY KEY, served_version INTEGER NOT NULL, latest_version INTEGER NOT NULL, seq INTEGER NOT NULL);
INSERT INTO "cards" VALUES('v1-card',1,1,1);
CREATE TABLE events (
  seq INTEGER PRIMARY KEY AUTOINCREMENT, ts TEXT NOT NULL, card_id TEXT, action TEXT NOT NULL, detail TEXT);
INSERT INTO "events" VALUES(1,'2026-12-01T21:31:56.187797+00:00','v1-card','upsert','{"version": 1, "status": "proposed"}');
CREATE TABLE jobs (
  id TEXT PRIMARY KEY, kind TEXT NOT NULL, state TEXT NOT NULL, doc TEXT NOT NULL, updated_at TEXT NOT NULL);
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
INSERT INTO "meta" VALUES('schema_version','1');
CREATE TABLE proposals (
  id TEXT PRIMARY KEY, status TEXT NOT NULL, doc TEXT NOT NULL, created_at TEXT NOT NULL, updated_at TEXT NOT NULL);
INSERT INTO "proposals" VALUES('v1-proposal','pending','{"id": "v1-proposal", "note": "schema 1"}','2026-12-01T21:31:56.206008+00:00','2026-12-01T21:31:56.206008+00:00');
CREATE TABLE trajectories (
  id TEXT PRIMARY KEY, doc TEXT NOT NULL, submitted_at TEXT NOT NULL, synthesized INTEGER NOT NULL DEFAULT 0);
DELETE FROM "sqlite_sequence";
INSERT INTO "sqlite_sequence" VALUES('events',1);
COMMIT;
