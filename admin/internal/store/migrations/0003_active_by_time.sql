-- The monitor looks only for runs in flight since before a cutoff (30 s and
-- more ago): ordering the in-flight index by dispatch time lets it read just
-- those, instead of every run in flight, which under load is thousands.
DROP INDEX runs_active;
CREATE INDEX runs_active ON runs (status, triggered_at) WHERE status IN (1, 7);
