-- Sending ahead (issue 20): what an executor declared it can do at its
-- latest heartbeat (RegisterRequest.capabilities), one bit per Capability
-- (bit 1: CAPABILITY_DUE_AT), so that an admin that restarts, or another
-- admin of the database, knows it before the executor's next heartbeat.
ALTER TABLE registry ADD COLUMN capabilities INTEGER NOT NULL DEFAULT 0;
