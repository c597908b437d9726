package auth

import (
	"crypto/subtle"
	"sync"
)

// GroupToken is an executor group's own executor access token.
type GroupToken struct {
	GroupID int64
	AppName string
	Token   string
}

// Executor is who an executor's call comes from, by the token it carries:
// a group with its own token, or Global (the admin's --token, or any caller
// when the admin runs without one).
type Executor struct {
	// GroupID is the group whose own token the call carries; 0 for the
	// global token.
	GroupID int64
}

// Global reports whether the call carries the global executor token.
func (e Executor) Global() bool { return e.GroupID == 0 }

// ExecutorTokens holds the executor access tokens: the global one and the
// groups' own. A group with its own token accepts only that token, both
// ways: its executors register and report with it, and the admin sends it
// on its calls to them. The other groups use the global token. It is safe
// for concurrent use; Set replaces the groups' tokens as they change.
type ExecutorTokens struct {
	global string
	mu     sync.RWMutex
	byHash map[string]int64 // HashToken(token) -> group
	groups map[int64]string // group -> its own token
	apps   map[string]int64 // app name -> group, of groups with their own token
}

// NewExecutorTokens returns the tokens with the global one; "" accepts any
// call for groups without a token of their own (--insecure).
func NewExecutorTokens(global string) *ExecutorTokens {
	return &ExecutorTokens{global: global, byHash: map[string]int64{}, groups: map[int64]string{}, apps: map[string]int64{}}
}

// Global returns the global executor token; "" when the admin runs
// without one.
func (t *ExecutorTokens) Global() string { return t.global }

// Set replaces the groups' own tokens.
func (t *ExecutorTokens) Set(groups []GroupToken) {
	byHash := make(map[string]int64, len(groups))
	byGroup := make(map[int64]string, len(groups))
	apps := make(map[string]int64, len(groups))
	for _, g := range groups {
		if g.Token == "" {
			continue
		}
		byHash[HashToken(g.Token)] = g.GroupID
		byGroup[g.GroupID] = g.Token
		apps[g.AppName] = g.GroupID
	}
	t.mu.Lock()
	t.byHash, t.groups, t.apps = byHash, byGroup, apps
	t.mu.Unlock()
}

// ForGroup returns the token the admin sends on its calls to group id's
// executors: the group's own, else the global one ("" sends none).
func (t *ExecutorTokens) ForGroup(id int64) string {
	t.mu.RLock()
	defer t.mu.RUnlock()
	if tok, ok := t.groups[id]; ok {
		return tok
	}
	return t.global
}

// Identify returns who a call carrying token (from an Authorization
// header; "" for none) comes from, and false for a wrong or missing token.
// A group's token is looked up by its hash, which leaks nothing useful
// through timing; the global one is compared in constant time.
func (t *ExecutorTokens) Identify(token string) (Executor, bool) {
	if token != "" {
		t.mu.RLock()
		id, ok := t.byHash[HashToken(token)]
		t.mu.RUnlock()
		if ok {
			return Executor{GroupID: id}, true
		}
	}
	if t.global == "" || subtle.ConstantTimeCompare([]byte(token), []byte(t.global)) == 1 {
		return Executor{}, true
	}
	return Executor{}, false
}

// MayServeApp reports whether e may register, heartbeat and deregister
// under app name: with the app's group's own token if it has one, else
// with the global token.
func (t *ExecutorTokens) MayServeApp(e Executor, app string) bool {
	t.mu.RLock()
	id, own := t.apps[app]
	t.mu.RUnlock()
	if own {
		return e.GroupID == id
	}
	return e.Global()
}

// MayActFor reports whether e may report results of group id's runs: with
// the group's own token if it has one, else with the global token.
func (t *ExecutorTokens) MayActFor(e Executor, id int64) bool {
	t.mu.RLock()
	_, own := t.groups[id]
	t.mu.RUnlock()
	if own {
		return e.GroupID == id
	}
	return e.Global()
}

// Separate reports whether any group has a token of its own: when none
// does, every executor call carries the global token and no per-group
// check is needed.
func (t *ExecutorTokens) Separate() bool {
	t.mu.RLock()
	defer t.mu.RUnlock()
	return len(t.groups) > 0
}
