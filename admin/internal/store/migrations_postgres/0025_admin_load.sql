-- Each admin publishes with its lease the fires it claims a second and how
-- many admins it counts as sharing them (store.SetFiresPerAdmin): the
-- admins share the due jobs only as far as their load needs.
ALTER TABLE admins ADD COLUMN fires_per_s BIGINT NOT NULL DEFAULT 0;
ALTER TABLE admins ADD COLUMN sharing INTEGER NOT NULL DEFAULT 0;
