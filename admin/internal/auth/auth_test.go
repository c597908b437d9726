package auth_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"golang.org/x/crypto/bcrypt"

	"github.com/carillonhq/carillon/admin/internal/auth"
)

func TestPassword(t *testing.T) {
	t.Parallel()
	h, err := auth.HashPassword("correct horse", bcrypt.MinCost)
	if err != nil {
		t.Fatal(err)
	}
	h2, err := auth.HashPassword("correct horse", bcrypt.MinCost)
	if err != nil {
		t.Fatal(err)
	}
	if h == h2 {
		t.Error("two hashes of one password are equal: not salted")
	}
	if strings.Contains(h, "correct horse") {
		t.Error("hash contains the password")
	}
	if err := auth.CheckPassword(h, "correct horse"); err != nil {
		t.Errorf("right password: %v", err)
	}
	for _, pw := range []string{"correct horsE", "", "correct horse "} {
		if err := auth.CheckPassword(h, pw); !errors.Is(err, auth.ErrWrongPassword) {
			t.Errorf("CheckPassword(%q) = %v, want ErrWrongPassword", pw, err)
		}
	}
	if err := auth.CheckPassword("", "anything"); !errors.Is(err, auth.ErrWrongPassword) {
		t.Errorf("no hash (unknown user): %v, want ErrWrongPassword", err)
	}
	for _, pw := range []string{"short", strings.Repeat("x", 73)} {
		if _, err := auth.HashPassword(pw, bcrypt.MinCost); !errors.Is(err, auth.ErrPasswordRule) {
			t.Errorf("HashPassword(%d bytes) = %v, want ErrPasswordRule", len(pw), err)
		}
	}
	if a, b := auth.GeneratePassword(), auth.GeneratePassword(); a == b || auth.CheckPasswordRules(a) != nil {
		t.Errorf("generated passwords %q, %q: not unique or not valid", a, b)
	}
}

func TestTokens(t *testing.T) {
	t.Parallel()
	s, sh := auth.NewSessionToken()
	a, ah := auth.NewAPIToken()
	x := auth.NewExecutorToken()
	c, _ := auth.NewConsoleSessionToken()
	if !auth.IsConsoleSession(c) || auth.IsConsoleSession(s) || auth.IsConsoleSession(a) {
		t.Errorf("IsConsoleSession tells %q from %q and %q wrongly", c, s, a)
	}
	for _, tt := range []struct {
		token string
		kind  auth.CredentialKind
		ok    bool
	}{
		{s, auth.CredentialSession, true},
		{c, auth.CredentialSession, true},
		{a, auth.CredentialAPIToken, true},
		{x, 0, false},
		{"", 0, false},
		{"carillon_q_abc", 0, false},
	} {
		kind, ok := auth.KindOf(tt.token)
		if kind != tt.kind || ok != tt.ok {
			t.Errorf("KindOf(%q) = %v, %v; want %v, %v", tt.token, kind, ok, tt.kind, tt.ok)
		}
	}
	if sh != auth.HashToken(s) || ah != auth.HashToken(a) || sh == ah || strings.Contains(sh, s) {
		t.Error("hashes do not match their tokens, or reveal them")
	}
	if s2, _ := auth.NewSessionToken(); s2 == s {
		t.Error("two session tokens are equal")
	}
	for _, tt := range []struct {
		header, token string
		ok            bool
	}{
		{"Bearer abc", "abc", true},
		{"bearer  abc ", "abc", true},
		{"Basic abc", "", false},
		{"Bearer", "", false},
		{"Bearer   ", "", false},
		{"", "", false},
	} {
		token, ok := auth.Bearer(tt.header)
		if token != tt.token || ok != tt.ok {
			t.Errorf("Bearer(%q) = %q, %v; want %q, %v", tt.header, token, ok, tt.token, tt.ok)
		}
	}
}

func TestPrincipal(t *testing.T) {
	t.Parallel()
	admin := &auth.Principal{Role: auth.RoleAdmin}
	member := &auth.Principal{Role: auth.RoleMember, Groups: []int64{2, 5}}
	viewer := &auth.Principal{Role: auth.RoleViewer}
	var none *auth.Principal
	for _, tt := range []struct {
		name              string
		p                 *auth.Principal
		group             int64
		read, write, root bool
	}{
		{"AdminAnyGroup", admin, 9, true, true, true},
		{"MemberGranted", member, 5, true, true, false},
		{"MemberOtherGroup", member, 3, false, false, false},
		{"ViewerReadsAll", viewer, 9, true, false, false},
		{"Nobody", none, 2, false, false, false},
	} {
		if got := tt.p.CanRead(tt.group); got != tt.read {
			t.Errorf("%s: CanRead = %v", tt.name, got)
		}
		if got := tt.p.CanWrite(tt.group); got != tt.write {
			t.Errorf("%s: CanWrite = %v", tt.name, got)
		}
		if got := tt.p.Admin(); got != tt.root {
			t.Errorf("%s: Admin = %v", tt.name, got)
		}
	}
	if all, ids := member.ReadScope(); all || len(ids) != 2 {
		t.Errorf("member scope: %v %v", all, ids)
	}
	if all, _ := viewer.ReadScope(); !all {
		t.Error("viewer scope is not all groups")
	}
}

func TestLoginLimiter(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2026, 11, 23, 8, 0, 0, 0, time.UTC)
	l := auth.NewLoginLimiter(3, 10*time.Second, 5, time.Second)
	for i := range 3 {
		if err := l.Allow(t0, "ada", "10.0.0.1"); err != nil {
			t.Fatalf("attempt %d within the burst: %v", i+1, err)
		}
	}
	err := l.Allow(t0, "ada", "10.0.0.2")
	if !errors.Is(err, auth.ErrRateLimited) || !strings.Contains(err.Error(), "10 s") {
		t.Fatalf("4th attempt for one user = %v, want ErrRateLimited, retry in 10 s", err)
	}
	if err := l.Allow(t0, "bob", "10.0.0.2"); err != nil {
		t.Errorf("another user from another address is not limited: %v", err)
	}
	if err := l.Allow(t0.Add(10*time.Second), "ada", "10.0.0.2"); err != nil {
		t.Errorf("after the refill interval: %v", err)
	}
	// Per address: 5 at once, whatever the usernames.
	for i := range 5 {
		if err := l.Allow(t0, "user"+string(rune('a'+i)), "10.0.0.9"); err != nil {
			t.Fatalf("address attempt %d: %v", i+1, err)
		}
	}
	if err := l.Allow(t0, "userz", "10.0.0.9"); !errors.Is(err, auth.ErrRateLimited) {
		t.Errorf("6th attempt from one address = %v, want ErrRateLimited", err)
	}
	// A refused attempt spends nothing: userz has its whole burst later.
	for i := range 3 {
		if err := l.Allow(t0.Add(time.Hour), "userz", "10.0.0.10"); err != nil {
			t.Errorf("userz attempt %d after a refusal: %v", i+1, err)
		}
	}
}
