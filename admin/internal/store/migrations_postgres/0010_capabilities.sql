-- SQLite's 0010 (issue 20, sending ahead): what an executor declared it
-- can do at its latest heartbeat (RegisterRequest.capabilities), one bit
-- per Capability (bit 1: CAPABILITY_DUE_AT), which every admin of the
-- database reads.
ALTER TABLE registry ADD COLUMN capabilities BIGINT NOT NULL DEFAULT 0;
