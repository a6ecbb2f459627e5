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
