package dashboards

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/promql/parser"
)

// scrapeFixture is the exporter's golden /metrics output, produced by the
// exporter's end-to-end test (cmd/kafka_replication_exporter): the one source of truth for metric names.
const scrapeFixture = "internal/metrics/fixtures/e2e-output.txt"

// notFromExporter are metrics the rules use that Prometheus itself produces.
var notFromExporter = map[string]bool{"up": true}

// The golden scrape leaves out whole families whose values change from run to
// run (cmd/kafka_replication_exporter/e2e_test.go, deterministic()). For
// exactly those, the metrics table of docs/metrics.md stands in: the exporter's docgen
// test generates it from the registry's descriptors, so it is no hand list.
// The same goes for the families a healthy partition has no series of
// (sparse: written only where not 0; derived: per-topic form only), which
// the table's generated text says of them.
var (
	omittedFromGolden = regexp.MustCompile(`(_timestamp_seconds|_duration_seconds|_build_info)$`)
	metricRow         = regexp.MustCompile("(?m)^\\| `(kafka_replication_[a-z_]+)` \\|.*\\|(.*)\\|$")
	absentWhenHealthy = regexp.MustCompile(`Written only where not 0|Per-topic form only`)
)

// promQL is one PromQL expression and where it comes from.
type promQL struct {
	where string
	expr  string
}

// grafanaMacros turns Grafana's interval macros into durations so the
// expressions parse; the values do not matter.
var grafanaMacros = strings.NewReplacer(
	"$__rate_interval", "5m",
	"$__interval", "1m",
	"$__range", "1h",
)

var labelValues = regexp.MustCompile(`^label_values\((.*),\s*\w+\)$`)

// dashboardQueries returns every PromQL expression of a generated dashboard:
// targets, annotations and the selectors inside label_values() variables.
func dashboardQueries(t *testing.T, name string) []promQL {
	t.Helper()
	var out []promQL
	var walk func(path string, v any)
	walk = func(path string, v any) {
		switch v := v.(type) {
		case map[string]any:
			for k, child := range v {
				if s, ok := child.(string); ok && k == "expr" {
					out = append(out, promQL{name + ":" + path, grafanaMacros.Replace(s)})
					continue
				}
				walk(path+"."+k, child)
			}
		case []any:
			for _, child := range v {
				title := ""
				if m, ok := child.(map[string]any); ok {
					title, _ = m["title"].(string)
					if title == "" {
						title, _ = m["name"].(string)
					}
				}
				walk(path+"["+title+"]", child)
			}
		}
	}
	d := loadDashboard(t, name)
	walk("", d.raw)
	for _, v := range d.Templating.List {
		if m := labelValues.FindStringSubmatch(v.Definition); m != nil {
			out = append(out, promQL{name + ": variable " + v.Name, m[1]})
		}
	}
	return out
}

func ruleQueries(t *testing.T) []promQL {
	var out []promQL
	for _, r := range loadRules(t) {
		out = append(out, promQL{RulesFile + ": " + r.Alert + r.Record, r.Expr})
	}
	return out
}

func allQueries(t *testing.T) []promQL {
	out := ruleQueries(t)
	for name := range Dashboards {
		out = append(out, dashboardQueries(t, name)...)
	}
	return out
}

// metricNames parses expr and returns the metric names it selects.
func metricNames(expr string) ([]string, error) {
	node, err := parser.NewParser(parser.Options{}).ParseExpr(expr)
	if err != nil {
		return nil, err
	}
	var names []string
	parser.Inspect(node, func(n parser.Node, _ []parser.Node) error {
		vs, ok := n.(*parser.VectorSelector)
		if !ok {
			return nil
		}
		for _, m := range vs.LabelMatchers {
			if m.Name == labels.MetricName && m.Type == labels.MatchEqual {
				names = append(names, m.Value)
			}
		}
		return nil
	})
	return names, nil
}

// exposedMetrics reads the metric names of a Prometheus text exposition.
func exposedMetrics(t *testing.T) map[string]bool {
	t.Helper()
	f, err := os.Open(filepath.Join(repoRoot, scrapeFixture))
	if err != nil {
		t.Fatalf("%v: the exporter's golden scrape is missing, so the metric names in alerts/ and dashboards/ cannot be checked (the exporter's end-to-end test writes it)", err)
	}
	defer f.Close()
	names := map[string]bool{}
	s := bufio.NewScanner(f)
	s.Buffer(make([]byte, 1<<20), 1<<20)
	for s.Scan() {
		line := s.Text()
		if rest, ok := strings.CutPrefix(line, "# TYPE "); ok {
			names[strings.Fields(rest)[0]] = true
			continue
		}
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		if i := strings.IndexAny(line, "{ "); i > 0 {
			names[line[:i]] = true
		}
	}
	if err := s.Err(); err != nil {
		t.Fatal(err)
	}
	if len(names) == 0 {
		t.Fatalf("%s: no metrics", scrapeFixture)
	}
	metricsDoc, err := os.ReadFile(filepath.Join(repoRoot, "docs", "metrics.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range metricRow.FindAllStringSubmatch(string(metricsDoc), -1) {
		if omittedFromGolden.MatchString(m[1]) || absentWhenHealthy.MatchString(m[2]) {
			names[m[1]] = true
		}
	}
	return names
}

func TestQueriesParse(t *testing.T) {
	queries := allQueries(t)
	if len(queries) < 50 {
		t.Fatalf("found only %d queries; is the JSON walk broken?", len(queries))
	}
	for _, q := range queries {
		if _, err := metricNames(q.expr); err != nil {
			t.Errorf("%s: %v\n%s", q.where, err, q.expr)
		}
	}
}

// TestQueriesUseExposedMetrics fails when a rule or panel names a metric the
// exporter does not expose: a renamed metric would otherwise leave an alert
// that can never fire and a panel that is always empty.
func TestQueriesUseExposedMetrics(t *testing.T) {
	exposed := exposedMetrics(t)
	for _, r := range loadRules(t) {
		if r.Record != "" {
			exposed[r.Record] = true // a recording rule's output, checked where it is defined
		}
	}
	missing := map[string][]string{}
	for _, q := range allQueries(t) {
		names, err := metricNames(q.expr)
		if err != nil {
			continue // TestQueriesParse reports it
		}
		for _, n := range names {
			if !exposed[n] && !notFromExporter[n] {
				missing[n] = append(missing[n], q.where)
			}
		}
	}
	var sorted []string
	for n := range missing {
		sorted = append(sorted, n)
	}
	sort.Strings(sorted)
	for _, n := range sorted {
		t.Errorf("%s is not in %s; used by:\n  %s", n, scrapeFixture, strings.Join(uniq(missing[n]), "\n  "))
	}
}

func TestMetricNames(t *testing.T) {
	got, err := metricNames(`sum(rate(a_total{x="1"}[5m])) / on () b + c offset 1m and {__name__="d"} unless {__name__=~"e.+"}`)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"a_total", "b", "c", "d"}; strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("metricNames = %v, want %v", got, want)
	}
	if _, err := metricNames(`rate(x[$__rate_interval])`); err == nil {
		t.Error("unreplaced Grafana macro parsed")
	}
}

func uniq(s []string) []string {
	sort.Strings(s)
	out := s[:0]
	for i, v := range s {
		if i == 0 || v != s[i-1] {
			out = append(out, v)
		}
	}
	return out
}

// dashboardJSON is the part of a dashboard the lint tests read.
type dashboardJSON struct {
	UID        string           `json:"uid"`
	Title      string           `json:"title"`
	Editable   bool             `json:"editable"`
	Inputs     []any            `json:"__inputs"`
	Panels     []map[string]any `json:"panels"`
	Templating struct {
		List []variableJSON `json:"list"`
	} `json:"templating"`
	Annotations struct {
		List []map[string]any `json:"list"`
	} `json:"annotations"`
	raw map[string]any
}

type variableJSON struct {
	Name       string         `json:"name"`
	Type       string         `json:"type"`
	Query      any            `json:"query"`
	Definition string         `json:"definition"`
	Refresh    int            `json:"refresh"`
	Datasource map[string]any `json:"datasource"`
}

func loadDashboard(t *testing.T, name string) *dashboardJSON {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(repoRoot, name))
	if err != nil {
		t.Fatal(err)
	}
	var d dashboardJSON
	if err := json.Unmarshal(data, &d); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	if err := json.Unmarshal(data, &d.raw); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return &d
}
