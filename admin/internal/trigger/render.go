package trigger

import (
	"context"
	"fmt"
	"time"

	"github.com/carillonhq/carillon/admin/internal/paramtmpl"
	"github.com/carillonhq/carillon/admin/internal/store"
)

// render renders the params of p's fires whose job's param is a template
// (JobDefinition.ParamTemplate) and not yet rendered, each for its run and
// shard, once routed, and records them (store.RunStore.RenderParams) before they
// are sent. A fire whose template fails to render is not sent: it joins
// p.failed, saying why. Fires of other jobs cost a field read.
func (r *router) render(ctx context.Context, p *planned, now time.Time) error {
	var rendered []store.Rendered
	kept := p.fires[:0]
	for _, f := range p.fires {
		if !f.job.ParamTemplate || f.rendered {
			kept = append(kept, f)
			continue
		}
		param, err := r.renderParam(f.job, f, f.param)
		if err != nil {
			p.failed = append(p.failed, f.failed(err.Error(), now))
			continue
		}
		f.param, f.rendered = param, true
		rendered = append(rendered, store.Rendered{RunID: f.id, Param: param})
		kept = append(kept, f)
	}
	p.fires = kept
	return r.cfg.Store.Runs.RenderParams(ctx, rendered)
}

// renderParam renders src, the param template of f's run (its job's, or
// an override of it), of job, which marks its param as a template.
func (r *router) renderParam(job *store.JobDefinition, f *fire, src string) (string, error) {
	t, err := r.templates.Get(job.ID, job.UpdatedAt, src, job.TimeZone)
	if err == nil {
		var param string
		if param, err = t.Render(paramtmpl.Data{ScheduledAt: f.scheduledAt, JobID: job.ID, RunID: f.id,
			Attempt: f.attempt, ShardIndex: f.shardIndex, ShardTotal: f.shardTotal}); err == nil {
			return param, nil
		}
	}
	return "", fmt.Errorf("the param template failed to render; not sent: %w", err)
}
