package route

import (
	"context"
	"fmt"
	"strings"
)

// probe is the loop of [Failover] and [Busyover]: it asks each address in order with ask,
// which reports whether the executor is acceptable and, for the Message, how it answered.
// The first acceptable address is chosen. verb names the question in the Message ("beat");
// none is the error's explanation when no address is acceptable.
func probe(ctx context.Context, strategy, verb, none string, addresses []string,
	ask func(ctx context.Context, address string) (ok bool, answer string),
) (Pick, error) {
	if len(addresses) == 0 {
		return Pick{}, noAddresses(strategy)
	}
	var m message
	m.header(strategy, addresses, 256)
	var answers strings.Builder // "a: answer; b: answer", for the error
	for i, a := range addresses {
		if ctx.Err() != nil {
			return interrupted(ctx, strategy, verb, &m, i, len(addresses))
		}
		if i > 0 {
			m.WriteString("; ")
		}
		m.WriteString(verb)
		m.WriteString(" ")
		m.WriteString(a)
		m.WriteString(": ")
		ok, answer := ask(ctx, a)
		if !ok && ctx.Err() != nil {
			// The question was cut short by the fire's context; the answer says nothing about a.
			m.WriteString("interrupted")
			return interrupted(ctx, strategy, verb, &m, i+1, len(addresses))
		}
		m.WriteString(answer)
		if ok {
			m.WriteString("; ")
			m.chose(a)
			return m.single(a), nil
		}
		if i > 0 {
			answers.WriteString("; ")
		}
		answers.WriteString(a)
		answers.WriteString(": ")
		answers.WriteString(answer)
	}
	return m.pick(nil), noExecutor(strategy, "%s: %s", none, answers.String())
}

// interrupted returns the result of a probe whose ctx ended after asked of total addresses.
// The error wraps ctx.Err() and, if it differs, the context's cause.
func interrupted(ctx context.Context, strategy, verb string, m *message, asked, total int) (Pick, error) {
	if asked > 0 {
		m.WriteString("; ")
	}
	fmt.Fprintf(m, "stopped after %d of %d %ss: %v", asked, total, verb, context.Cause(ctx))
	err := ctx.Err()
	if cause := context.Cause(ctx); cause != err {
		err = fmt.Errorf("%w: %w", err, cause)
	}
	return m.pick(nil), fmt.Errorf("%s routing: stopped after %d of %d %ss: %w", strategy, asked, total, verb, err)
}
