package sdk_test

import (
	"os/exec"
	"strings"
	"testing"
)

// TestLinksNoMetricsNorTracing: package sdk depends on neither Prometheus
// nor OpenTelemetry, so an executor that imports only sdk links neither
// (sdkprom and sdkotel are opt-in).
func TestLinksNoMetricsNorTracing(t *testing.T) {
	t.Parallel()
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command on PATH")
	}
	out, err := exec.CommandContext(t.Context(), goTool, "list", "-deps", ".").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	for dep := range strings.Lines(string(out)) {
		if strings.Contains(dep, "prometheus") || strings.Contains(dep, "opentelemetry") {
			t.Errorf("sdk depends on %s", strings.TrimSpace(dep))
		}
	}
}
