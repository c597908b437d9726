package admin

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"os"
)

// clientTLS returns the TLS configuration of a client that trusts the CA
// certificates in the PEM file at path besides the system's roots, or nil
// (the system's roots only) when path is empty.
func clientTLS(path string) (*tls.Config, error) {
	if path == "" {
		return nil, nil
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	roots, err := x509.SystemCertPool()
	if err != nil {
		roots = x509.NewCertPool()
	}
	if !roots.AppendCertsFromPEM(b) {
		return nil, fmt.Errorf("%s: no PEM certificate in it", path)
	}
	return &tls.Config{RootCAs: roots, MinVersion: tls.VersionTLS12}, nil
}
