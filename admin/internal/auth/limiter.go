package auth

import (
	"fmt"
	"math"
	"sync"
	"time"

	"golang.org/x/time/rate"
)

// Defaults of LoginLimiter.
const (
	// LoginUserBurstDefault login attempts per username pass at once ...
	LoginUserBurstDefault = 5
	// LoginUserEveryDefault ... and then one per this interval.
	LoginUserEveryDefault = 12 * time.Second
	// LoginPeerBurstDefault login attempts per client address pass at once ...
	LoginPeerBurstDefault = 20
	// LoginPeerEveryDefault ... and then one per this interval.
	LoginPeerEveryDefault = 3 * time.Second
)

// maxLimiterKeys bounds each map of the limiter; past it, keys whose
// bucket is full again are forgotten.
const maxLimiterKeys = 10_000

// LoginLimiter limits login attempts per username and per client address,
// with token buckets. Time is an argument, so tests need no clock. It is
// safe for concurrent use; the zero value is not: use NewLoginLimiter.
type LoginLimiter struct {
	mu    sync.Mutex
	users buckets
	peers buckets
}

type buckets struct {
	every time.Duration
	burst int
	m     map[string]*rate.Limiter
}

// NewLoginLimiter returns a limiter with the defaults above; zero
// arguments take the defaults.
func NewLoginLimiter(userBurst int, userEvery time.Duration, peerBurst int, peerEvery time.Duration) *LoginLimiter {
	or := func(n, def int) int {
		if n > 0 {
			return n
		}
		return def
	}
	ord := func(d, def time.Duration) time.Duration {
		if d > 0 {
			return d
		}
		return def
	}
	return &LoginLimiter{
		users: buckets{every: ord(userEvery, LoginUserEveryDefault), burst: or(userBurst, LoginUserBurstDefault), m: map[string]*rate.Limiter{}},
		peers: buckets{every: ord(peerEvery, LoginPeerEveryDefault), burst: or(peerBurst, LoginPeerBurstDefault), m: map[string]*rate.Limiter{}},
	}
}

// Allow spends one attempt of username and one of peer at now. It returns
// an error wrapping ErrRateLimited, saying when to retry, when either has
// none left; then nothing is spent.
func (l *LoginLimiter) Allow(now time.Time, username, peer string) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	u, p := l.users.get(now, username), l.peers.get(now, peer)
	wait := max(waitFor(u, now), waitFor(p, now))
	if wait > 0 {
		return fmt.Errorf("%w: try again in %d s", ErrRateLimited, int(math.Ceil(wait.Seconds())))
	}
	u.AllowN(now, 1)
	p.AllowN(now, 1)
	return nil
}

// Unlock forgets username's spent attempts, so that its next logins pass
// at once (an ADMIN's way through a lock kept by someone else's failed
// attempts). The per-address limit is untouched.
func (l *LoginLimiter) Unlock(username string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	delete(l.users.m, username)
}

func (b *buckets) get(now time.Time, key string) *rate.Limiter {
	lim, ok := b.m[key]
	if ok {
		return lim
	}
	if len(b.m) >= maxLimiterKeys {
		for k, l := range b.m {
			if l.TokensAt(now) >= float64(b.burst) {
				delete(b.m, k)
			}
		}
	}
	lim = rate.NewLimiter(rate.Every(b.every), b.burst)
	lim.SetLimitAt(now, rate.Every(b.every)) // start the bucket's clock at now, full
	b.m[key] = lim
	return lim
}

// waitFor returns how long until lim has a whole token at now.
func waitFor(lim *rate.Limiter, now time.Time) time.Duration {
	tokens := lim.TokensAt(now)
	if tokens >= 1 {
		return 0
	}
	return time.Duration((1 - tokens) / float64(lim.Limit()) * float64(time.Second))
}
