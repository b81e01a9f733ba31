package deploy_test

import (
	"bufio"
	"encoding/json"
	"net/http"
	"os"
	"regexp"
	"strings"
	"testing"
)

// dashboard is the part of deploy/grafana/edgecms.json the checks read.
type dashboard struct {
	Title  string `json:"title"`
	Panels []struct {
		Title   string `json:"title"`
		Targets []struct {
			Expr string `json:"expr"`
		} `json:"targets"`
	} `json:"panels"`
}

// seriesName matches the metric names a PromQL expression reads.
var seriesName = regexp.MustCompile(`\b(edgecms_[a-z_]+|go_sql_[a-z_]+|process_[a-z_]+)\b`)

func readDashboard(t *testing.T) dashboard {
	t.Helper()
	raw, err := os.ReadFile("grafana/edgecms.json")
	if err != nil {
		t.Fatal(err)
	}
	var d dashboard
	if err := json.Unmarshal(raw, &d); err != nil {
		t.Fatalf("grafana/edgecms.json: %v", err)
	}
	if d.Title == "" || len(d.Panels) == 0 {
		t.Fatalf("grafana/edgecms.json has no title or no panels")
	}
	return d
}

// TestDashboardCoversTheAlertSeries: the dashboard shows what an operator
// alerts on (issue 15's list).
func TestDashboardCoversTheAlertSeries(t *testing.T) {
	d := readDashboard(t)
	var all strings.Builder
	for _, p := range d.Panels {
		if len(p.Targets) == 0 {
			t.Errorf("panel %q has no query", p.Title)
		}
		for _, q := range p.Targets {
			all.WriteString(q.Expr + "\n")
		}
	}
	for _, s := range []string{"edgecms_publisher_lag_events", "edgecms_publisher_lag_seconds", "edgecms_webhook_queue_depth",
		"edgecms_webhook_queue_oldest_age_seconds", "edgecms_webhook_failures_total", "edgecms_edge_cache_bytes",
		"edgecms_store_errors_total", "go_sql_in_use_connections", "edgecms_http_requests_total"} {
		if !strings.Contains(all.String(), s) {
			t.Errorf("the dashboard does not show %s", s)
		}
	}
}

// checkDashboardSeries scrapes the /metrics of running roles and fails for
// a series the dashboard reads that none of them serves, so that a renamed
// metric cannot leave an empty panel behind.
func checkDashboardSeries(t *testing.T, metricsURLs ...string) {
	t.Helper()
	served := map[string]bool{}
	for _, u := range metricsURLs {
		resp, err := http.Get(u)
		if err != nil {
			t.Fatalf("GET %s: %v", u, err)
		}
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			line := sc.Text()
			if strings.HasPrefix(line, "# TYPE ") {
				served[strings.Fields(line)[2]] = true
			}
		}
		resp.Body.Close()
	}
	for _, p := range readDashboard(t).Panels {
		for _, q := range p.Targets {
			for _, name := range seriesName.FindAllString(q.Expr, -1) {
				base := strings.TrimSuffix(name, "_bucket")
				if !served[name] && !served[base] {
					t.Errorf("panel %q reads %s, which no role serves", p.Title, name)
				}
			}
		}
	}
}
