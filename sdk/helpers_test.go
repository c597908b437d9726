package sdk_test

import (
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/carillonhq/carillon/sdk/sdktest"
)

// waitLimit bounds every wait for an event in these tests, as sdktest's.
const waitLimit = sdktest.WaitLimit

// deadURL is the URL of a port nobody listens on.
func deadURL(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	u := "http://" + ln.Addr().String()
	ln.Close()
	return u
}

// callsRefused says how many calls admin refused, for a bad token or
// while down.
func callsRefused(admin *sdktest.Admin) int {
	calls, _ := admin.Refused()
	return calls
}

// reportsRefused says how many ReportResults calls admin refused.
func reportsRefused(admin *sdktest.Admin) int {
	_, reports := admin.Refused()
	return reports
}

// h2cClient speaks cleartext HTTP/2 only.
func h2cClient() *http.Client {
	p := new(http.Protocols)
	p.SetUnencryptedHTTP2(true)
	return &http.Client{Transport: &http.Transport{Protocols: p}}
}

// waitUntil polls cond until it returns nil, failing with its last error
// after waitLimit. It is for what another process does (a script that
// writes a file), which sends the test no signal: what the code under test
// does, a test waits for on a signal (internal/clock's doc has the rule).
func waitUntil(t *testing.T, what string, cond func() error) {
	t.Helper()
	deadline := time.Now().Add(waitLimit)
	for {
		err := cond()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: after %v: %v", what, waitLimit, err)
		}
		time.Sleep(10 * time.Millisecond) // another process: no signal to wait on
	}
}
