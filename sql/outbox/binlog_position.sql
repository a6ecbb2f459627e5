-- Where the binary-log relay has got to: the position after the last
-- transaction whose events it published and saw confirmed (or, with
-- --save before-publish, unsafe, the one it is about to publish). It
-- starts again from here after a crash. One row per relay.
CREATE TABLE relay_position (
relay VARCHAR(64) PRIMARY KEY,
file VARCHAR(255) NOT NULL,
pos BIGINT NOT NULL,
saved_at DATETIME(6) NOT NULL
) ENGINE=InnoDB;
