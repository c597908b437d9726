package metrics_test

import (
	"context"
	"encoding/json"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/carillonhq/carillon/admin/internal/metrics"
	carillonv1 "github.com/carillonhq/carillon/proto/carillon/v1"
)

// TestDashboardNamesMetrics: every carillon_ metric the example Grafana
// dashboard queries is one the admin exports (a histogram's _bucket, _sum
// and _count series included), so a renamed metric cannot leave the
// dashboard silently empty.
func TestDashboardNamesMetrics(t *testing.T) {
	t.Parallel()
	b, err := os.ReadFile("../../../examples/grafana/carillon.json")
	if err != nil {
		t.Fatal(err)
	}
	var dash struct {
		Panels []struct {
			Title   string `json:"title"`
			Targets []struct {
				Expr string `json:"expr"`
			} `json:"targets"`
		} `json:"panels"`
	}
	if err := json.Unmarshal(b, &dash); err != nil {
		t.Fatalf("the dashboard is not JSON: %v", err)
	}
	m := metrics.New()
	m.Sample(metrics.State{
		ExecutorsOnlineFunc: func(context.Context) (map[string]int, error) { return map[string]int{"app": 1}, nil },
		ScanLagFunc:         func() time.Duration { return 0 },
		WriteQueueFunc:      func() int64 { return 0 },
		FireWritesFunc:      func() map[string]int { return map[string]int{"claim": 0} },
		DatabaseBytesFunc:   func() (int64, error) { return 1, nil },
	})
	// Vectors show in a scrape once a label value is used.
	m.Dispatched(carillonv1.RouteStrategy_ROUTE_STRATEGY_FIRST, metrics.CodeOK, 1)
	m.Alarm("webhook", true)
	fams, err := m.Gatherer().Gather()
	if err != nil {
		t.Fatal(err)
	}
	// api_requests_total has no series before the first API call.
	exported := map[string]bool{"carillon_api_requests_total": true}
	for _, f := range fams {
		exported[f.GetName()] = true
	}
	name := regexp.MustCompile(`carillon_[a-z_]+`)
	queried := 0
	for _, p := range dash.Panels {
		for _, target := range p.Targets {
			for _, n := range name.FindAllString(target.Expr, -1) {
				queried++
				base := n
				for _, suffix := range []string{"_bucket", "_sum", "_count"} {
					if s, ok := strings.CutSuffix(n, suffix); ok && exported[s] {
						base = s
					}
				}
				if !exported[base] {
					t.Errorf("panel %q queries %s, which the admin does not export", p.Title, n)
				}
			}
		}
	}
	if len(dash.Panels) < 12 || queried == 0 {
		t.Errorf("the dashboard has %d panels querying %d carillon_ metrics; want at least a dozen panels", len(dash.Panels), queried)
	}
}

// TestDashboardInstanceVariable: the dashboard has an instance variable
// and every carillon_ series it queries is narrowed by it, so that several
// admins (sharing a PostgreSQL database) are not summed into one.
func TestDashboardInstanceVariable(t *testing.T) {
	t.Parallel()
	b, err := os.ReadFile("../../../examples/grafana/carillon.json")
	if err != nil {
		t.Fatal(err)
	}
	var dash struct {
		Templating struct {
			List []struct {
				Name, Type, Definition string
				IncludeAll             bool `json:"includeAll"`
			} `json:"list"`
		} `json:"templating"`
		Panels []struct {
			Title   string `json:"title"`
			Targets []struct {
				Expr string `json:"expr"`
			} `json:"targets"`
		} `json:"panels"`
	}
	if err := json.Unmarshal(b, &dash); err != nil {
		t.Fatal(err)
	}
	found := false
	for _, v := range dash.Templating.List {
		if v.Name == "instance" && v.Type == "query" && strings.Contains(v.Definition, "instance") && v.IncludeAll {
			found = true
		}
	}
	if !found {
		t.Errorf("no instance variable (a query with All) in %+v", dash.Templating.List)
	}
	series := regexp.MustCompile(`carillon_[a-z_]+(\{[^}]*\})?`)
	for _, p := range dash.Panels {
		for _, target := range p.Targets {
			for _, s := range series.FindAllString(target.Expr, -1) {
				if !strings.Contains(s, `instance=~"$instance"`) {
					t.Errorf("panel %q: %s is not narrowed by $instance", p.Title, s)
				}
			}
		}
	}
}
