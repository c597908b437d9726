package paramtmpl

import (
	"sync"
	"time"
)

// Cache keeps the parsed templates of jobs, each by job ID for the
// definition updated at a given time, so that a job's template is parsed
// once per update, not once per fire. It is safe for concurrent use.
type Cache struct {
	mu   sync.Mutex
	jobs map[int64]cached
}

// cached is a job's parsed template, or why it did not parse.
type cached struct {
	updatedAt time.Time
	src, zone string
	t         *Template
	err       error
}

// Get returns the parsed template src of job id, in time zone zone, as
// defined at updatedAt; parsed now unless that definition's is cached. A
// src other than the cached one (a param override of TriggerJob or a
// workflow node) is parsed, and cached in its place.
func (c *Cache) Get(id int64, updatedAt time.Time, src, zone string) (*Template, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.jobs[id]; ok && e.updatedAt.Equal(updatedAt) && e.src == src && e.zone == zone {
		return e.t, e.err
	}
	if c.jobs == nil {
		c.jobs = map[int64]cached{}
	}
	t, err := Parse(src, zone)
	c.jobs[id] = cached{updatedAt: updatedAt, src: src, zone: zone, t: t, err: err}
	return t, err
}
