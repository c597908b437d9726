package sdk

import (
	"net"
	"strings"
	"testing"
)

func TestAdvertiseURL(t *testing.T) {
	t.Parallel()
	for _, test := range []struct {
		addr net.Addr
		want string // prefix
	}{
		{&net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 9999}, "http://127.0.0.1:9999"},
		{&net.TCPAddr{IP: net.IPv4(10, 1, 2, 3), Port: 80}, "http://10.1.2.3:80"},
		{&net.TCPAddr{IP: net.IPv6loopback, Port: 9999}, "http://[::1]:9999"},
	} {
		if got, err := advertiseURL(test.addr); err != nil || got != test.want {
			t.Errorf("advertiseURL(%v) = %q, %v; want %q", test.addr, got, err, test.want)
		}
	}
	// Unspecified addresses become an address of this host.
	for _, ip := range []net.IP{nil, net.IPv4zero, net.IPv6unspecified} {
		got, err := advertiseURL(&net.TCPAddr{IP: ip, Port: 9999})
		if err != nil || !strings.HasPrefix(got, "http://") || !strings.HasSuffix(got, ":9999") ||
			strings.Contains(got, "0.0.0.0") || strings.Contains(got, "[::]") {
			t.Errorf("advertiseURL(%v) = %q, %v; want a concrete IPv4 address", ip, got, err)
		}
		host, _, _ := net.SplitHostPort(strings.TrimPrefix(got, "http://"))
		if parsed := net.ParseIP(host); parsed == nil || parsed.To4() == nil {
			t.Errorf("advertiseURL(%v) host %q is not IPv4", ip, host)
		}
	}
	if _, err := advertiseURL(&net.UnixAddr{Name: "/tmp/x", Net: "unix"}); err == nil {
		t.Error("advertiseURL(unix socket) has no error")
	}
}
