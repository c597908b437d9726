package admin_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"testing"
	"time"

	"connectrpc.com/connect"
	"connectrpc.com/grpchealth"
)

// TestReadyz checks the admin's wiring of readiness: once its scheduler has
// scanned, /readyz answers 200 and gRPC health SERVING, over the real
// admin; /healthz answers 200.
func TestReadyz(t *testing.T) {
	a := startAdmin(t)
	get := func(path string) (int, string, error) {
		res, err := http.Get(a.URL + path)
		if err != nil {
			return 0, "", err
		}
		defer res.Body.Close()
		body, _ := io.ReadAll(res.Body)
		return res.StatusCode, string(body), nil
	}
	if code, body, err := get("/healthz"); err != nil || code != http.StatusOK {
		t.Fatalf("/healthz: %d %q %v", code, body, err)
	}
	eventually(t, a.URL, 30*time.Second, func() error { // the first scan
		if code, body, err := get("/readyz"); err != nil || code != http.StatusOK {
			return fmt.Errorf("/readyz: %d %q %v", code, body, err)
		}
		return nil
	})
	res, err := grpchealth.NewClient(h2cClient(), a.URL, connect.WithGRPC()).Check(context.Background(), &grpchealth.CheckRequest{})
	if err != nil || res.Status != grpchealth.StatusServing {
		t.Fatalf("gRPC health of a ready admin: %v %v", res, err)
	}
}
