-- Param templates (issue 34 item 3): a job whose param is a text/template
-- rendered for each run (Job.param_template), and the param a run's
-- executor got, once rendered: NULL until then, and for the runs of other
-- jobs, whose param is sent as it is.
ALTER TABLE jobs ADD COLUMN param_template INTEGER NOT NULL DEFAULT 0;
ALTER TABLE runs ADD COLUMN rendered_param TEXT;
