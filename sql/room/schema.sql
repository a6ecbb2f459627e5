-- A workshop room (lab serve --room NAME): one row per participant, written
-- by whichever lab serve their session runs on, read by the instructor's
-- room and by a participant's next session on any server of the room.
CREATE TABLE IF NOT EXISTS participant (
  name        VARCHAR(32)  NOT NULL PRIMARY KEY,
  server      VARCHAR(128) NOT NULL,
  lesson      VARCHAR(64)  NOT NULL,
  step        INT          NOT NULL,
  steps       INT          NOT NULL,
  step_since  DATETIME(6)  NOT NULL,
  passed      INT          NOT NULL,
  failed      INT          NOT NULL,
  verdicts    VARCHAR(255) NOT NULL,
  progress    LONGTEXT     NOT NULL,
  updated     DATETIME(6)  NOT NULL
) ENGINE=InnoDB
;
-- What the instructor asks of the room: go to a lesson, a line for every
-- status bar, end a session. Every lab serve of the room polls it.
CREATE TABLE IF NOT EXISTS command (
  id       BIGINT       NOT NULL AUTO_INCREMENT PRIMARY KEY,
  target   VARCHAR(32)  NOT NULL, -- a participant, or '' for everyone
  kind     VARCHAR(16)  NOT NULL, -- goto | say | end
  arg      VARCHAR(255) NOT NULL,
  created  DATETIME(6)  NOT NULL
) ENGINE=InnoDB
;
-- One screen per participant across every server of the room: the server
-- holding it beats every few seconds; a row whose beat is stale belongs to
-- a server that died and may be taken over. lab room --reset holds it
-- (server 'reset') until the participant's namespace is clean.
CREATE TABLE IF NOT EXISTS screen (
  name    VARCHAR(32)  NOT NULL PRIMARY KEY,
  server  VARCHAR(128) NOT NULL,
  beat    DATETIME(6)  NOT NULL
) ENGINE=InnoDB
;
-- Who logged in, who was refused and why, sessions that ended, the
-- instructor's commands: one line each, from every server of the room.
-- Each kind (logins, refusals, commands, other) keeps its own newest
-- lines: a flood of one kind never pushes another out.
CREATE TABLE IF NOT EXISTS audit (
  id      BIGINT       NOT NULL AUTO_INCREMENT PRIMARY KEY,
  at      DATETIME(6)  NOT NULL,
  server  VARCHAR(128) NOT NULL,
  line    VARCHAR(512) NOT NULL,
  kind    VARCHAR(16)  NOT NULL DEFAULT 'other',
  KEY kind_id (kind, id)
) ENGINE=InnoDB
;
-- A participant's screen as last drawn, published by the server holding it
-- while the instructor watches it (watch NAME): a read-only mirror on the
-- instructor's screen, whichever server of the room each is on.
CREATE TABLE IF NOT EXISTS frame (
  name     VARCHAR(32)  NOT NULL PRIMARY KEY,
  content  MEDIUMTEXT   NOT NULL,
  width    INT          NOT NULL,
  height   INT          NOT NULL,
  at       DATETIME(6)  NOT NULL
) ENGINE=InnoDB
;
-- The lessons the room's servers serve, each lab serve its own (a --lessons
-- folder's too), recorded at its start: lab room --goto accepts them.
CREATE TABLE IF NOT EXISTS lesson (
  id      VARCHAR(64)  NOT NULL PRIMARY KEY,
  number  INT          NOT NULL,
  server  VARCHAR(128) NOT NULL
) ENGINE=InnoDB
;
-- What the room's servers tell its instructor's lab: how they made the
-- participants' broker logins (broker_control), so lab room --reset and
-- --drop remove them the same way with no extra flag.
CREATE TABLE IF NOT EXISTS meta (
  k  VARCHAR(32)  NOT NULL PRIMARY KEY,
  v  VARCHAR(255) NOT NULL
) ENGINE=InnoDB
;
-- The debrief's record: each failure, prediction, goto and reset as it
-- happened, appended and never rewritten (a reset forgets a participant's
-- progress, not what they did).
CREATE TABLE IF NOT EXISTS event (
  id      BIGINT       NOT NULL AUTO_INCREMENT PRIMARY KEY,
  at      DATETIME(6)  NOT NULL,
  name    VARCHAR(32)  NOT NULL, -- the participant, '' for the whole room
  kind    VARCHAR(16)  NOT NULL, -- fail | predict | goto | reset
  lesson  VARCHAR(64)  NOT NULL,
  step    VARCHAR(128) NOT NULL, -- the failed step, the prediction's name
  detail  VARCHAR(512) NOT NULL, -- why it failed, the pick, the lesson sent to
  KEY name_id (name, id),
  KEY kind_lesson (kind, lesson)
) ENGINE=InnoDB
