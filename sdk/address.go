package sdk

import (
	"fmt"
	"net"
	"strconv"
)

// advertiseURL derives the URL the admin calls back from a listener's
// address: see Config.AdvertiseURL.
func advertiseURL(addr net.Addr) (string, error) {
	tcp, ok := addr.(*net.TCPAddr)
	if !ok {
		return "", fmt.Errorf("%w: listener address %v is not TCP: set AdvertiseURL", ErrInvalidConfig, addr)
	}
	ip := tcp.IP
	if ip == nil || ip.IsUnspecified() {
		ip = hostIPv4()
	}
	return "http://" + net.JoinHostPort(ip.String(), strconv.Itoa(tcp.Port)), nil
}

// hostIPv4 returns the first IPv4 address of an up, non-loopback interface
// (link-local addresses last), or 127.0.0.1.
func hostIPv4() net.IP {
	var linkLocal net.IP
	ifaces, _ := net.Interfaces()
	for _, ifc := range ifaces {
		if ifc.Flags&net.FlagUp == 0 || ifc.Flags&net.FlagLoopback != 0 {
			continue
		}
		addrs, _ := ifc.Addrs()
		for _, a := range addrs {
			n, ok := a.(*net.IPNet)
			if !ok {
				continue
			}
			ip := n.IP.To4()
			switch {
			case ip == nil || ip.IsLoopback():
			case ip.IsLinkLocalUnicast():
				if linkLocal == nil {
					linkLocal = ip
				}
			default:
				return ip
			}
		}
	}
	if linkLocal != nil {
		return linkLocal
	}
	return net.IPv4(127, 0, 0, 1)
}
