package sdk

import (
	"errors"
	"fmt"
	"maps"
	"sync"
	"unicode/utf8"
)

// MaxOutputsSize is the most bytes of keys and values together that one run
// may publish with [Job.SetOutput]; the admin refuses a result with more.
const MaxOutputsSize = 64 << 10

// ErrOutputsTooLarge is wrapped by the error [Job.SetOutput] returns when
// the run's outputs would grow past [MaxOutputsSize].
var ErrOutputsTooLarge = errors.New("sdk: outputs too large")

// outputs are what a run's handler published.
type outputs struct {
	mu   sync.Mutex
	m    map[string]string
	size int // bytes of keys and values
}

// SetOutput publishes value under key for the runs that depend on this
// one: when the run succeeds, the workflow nodes that depend on its node
// get it in their [Job.Inputs]. The outputs are reported with the run's
// result, and shown with the run in the admin. Setting a key again
// replaces its value. It returns an error, and publishes nothing, for an
// empty key, a key or value that is not valid UTF-8, or when the run's
// outputs would exceed [MaxOutputsSize] ([ErrOutputsTooLarge]). Outputs
// are reported with the result of a run whose handler returned, whatever
// it returned (a failed run's are shown, and given to no one), not with
// one killed or timed out while it ran. It is safe for concurrent use on
// a Job the executor made.
func (j *Job) SetOutput(key, value string) error {
	if key == "" {
		return errors.New("sdk: SetOutput: empty key")
	}
	if !utf8.ValidString(key) || !utf8.ValidString(value) {
		return fmt.Errorf("sdk: SetOutput %q: key and value must be valid UTF-8", key)
	}
	if j.outputs == nil { // a Job built by hand
		j.outputs = &outputs{}
	}
	o := j.outputs
	o.mu.Lock()
	defer o.mu.Unlock()
	size := o.size + len(value)
	if old, ok := o.m[key]; ok {
		size -= len(old)
	} else {
		size += len(key)
	}
	if size > MaxOutputsSize {
		return fmt.Errorf("%w: %q would make the run's outputs %d bytes, more than %d", ErrOutputsTooLarge, key, size, MaxOutputsSize)
	}
	if o.m == nil {
		o.m = map[string]string{}
	}
	o.m[key], o.size = value, size
	return nil
}

// Outputs returns a copy of what the handler published with
// [Job.SetOutput]; nil when nothing. For tests of handlers, mostly.
func (j *Job) Outputs() map[string]string {
	if j.outputs == nil {
		return nil
	}
	j.outputs.mu.Lock()
	defer j.outputs.mu.Unlock()
	return maps.Clone(j.outputs.m)
}
