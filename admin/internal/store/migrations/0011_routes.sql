-- Fencing (issue 29): the executor a run is routed to, recorded before the
-- call that sends it, so that an admin taking over (after a restart, or
-- adopting a dead admin's runs) knows which runs can have reached an
-- executor, and which one: '' means never routed, so never sent. A run
-- in flight when this migration runs may have been sent by the older
-- admin to any executor: '*' says so, and the new admin asks them all.
ALTER TABLE runs ADD COLUMN routed_to TEXT NOT NULL DEFAULT '';
UPDATE runs SET routed_to = '*' WHERE status = 1 AND executor_address = '';
