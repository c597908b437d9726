// Package paramtmpl renders the params of jobs that mark theirs as a
// template (Job.param_template): a Go text/template over a run's logical
// time and place (Data), parsed once per job definition (Cache) and
// rendered for each run after it is routed, when its shard is known.
//
// A template may call text/template's builtins and the methods of its
// data (time.Time's Format, AddDate, ...), nothing else; range, define,
// block and template actions are refused (Parse), so that a render ends
// quickly, and its output is bounded by MaxBytes, the param's own limit.
package paramtmpl
