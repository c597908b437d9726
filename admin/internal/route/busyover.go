package route

import "context"

// Busyover returns the BUSYOVER strategy: the first address, in order, whose IdleBeat says
// it is idle for the job (not running it, nothing of it queued). Executors that are busy or
// do not answer are skipped; the Pick's Message lists each one asked with its answer or
// reason. If ctx ends first, Pick stops and returns an error wrapping ctx.Err(). p must not
// be nil.
func Busyover(p Prober) Strategy { return &busyover{prober: p} }

type busyover struct{ prober Prober }

func (*busyover) String() string { return "BUSYOVER" }

// Pick implements [Strategy].
func (s *busyover) Pick(ctx context.Context, jobID int64, addresses []string) (Pick, error) {
	return probe(ctx, s.String(), "idle beat", "no executor is idle", addresses,
		func(ctx context.Context, a string) (bool, string) {
			idle, reason, err := s.prober.IdleBeat(ctx, a, jobID)
			switch {
			case err != nil:
				return false, "unreachable: " + err.Error()
			case idle:
				return true, "idle"
			case reason == "":
				return false, "busy"
			default:
				return false, "busy: " + reason
			}
		})
}
