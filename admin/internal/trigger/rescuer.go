package trigger

import (
	"sync"
	"sync/atomic"
	"time"
)

// Rescuer settles the runs whose result will not come: Monitor sweeps for
// runs of lost executors, runs past their timeout, runs of restarted
// executors and of MANUAL groups' executors, and runs their executor does
// not hold; Reconcile, after an admin restart or for the admins this one
// adopts over a shared database, asks executors which of the runs claimed
// and not recorded as sent they hold, records those and sends the rest.
// Its judgements are settled by the Completer like any result. It is safe
// for concurrent use.
type Rescuer struct {
	cfg        *Config
	gateway    *Gateway
	router     *router
	dispatcher *Dispatcher
	completer  *Completer

	restartsMu sync.Mutex
	restarts   map[string]time.Time // executor addresses whose process restarted, and when it registered
	manual     manualProbes         // executors of MANUAL groups that hold runs
	watch      heldWatch            // the running runs not held ACTIVE by their executors (held_watch.go)
	heard      heard                // what executors' heartbeats said of their clocks (heartbeat.go)
	// earlier are the runs of Config.Unsent while Reconcile settles them:
	// the monitor leaves them be. Nil once Reconcile has settled or
	// recorded them all.
	earlier atomic.Pointer[[]int64]
}
