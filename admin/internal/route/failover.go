package route

import "context"

// Failover returns the FAILOVER strategy: the first address, in order, whose Beat answers
// OK. It beats one executor after another and stops at the first that answers, so a healthy
// group costs one beat per fire. The Pick's Message lists every beat tried with its outcome.
// If ctx ends first, Pick stops and returns an error wrapping ctx.Err(). p must not be nil.
func Failover(p Prober) Strategy { return &failover{prober: p} }

type failover struct{ prober Prober }

func (*failover) String() string { return "FAILOVER" }

// Pick implements [Strategy].
func (s *failover) Pick(ctx context.Context, _ int64, addresses []string) (Pick, error) {
	return probe(ctx, s.String(), "beat", "every executor failed its beat", addresses,
		func(ctx context.Context, a string) (bool, string) {
			if err := s.prober.Beat(ctx, a); err != nil {
				return false, err.Error()
			}
			return true, "OK"
		})
}
