// Command render draws docs/dashboard.png: a few panels of the Grafana
// overview dashboard (dashboards/kafka-replication-overview.json), with
// their own PromQL, over a time range of a running Prometheus. The alert-loop
// test runs it with RENDER_DASHBOARD=1 at the end of its failure scenario, so
// the picture shows what an operator would have seen.
//
// Grafana is not needed: the expressions are taken from the dashboard JSON,
// the template variables are substituted, and the series are drawn with the
// standard library's image packages.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"log"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/kafka-replication-exporter/kafka_replication_exporter/e2e/stack"
)

// panels are drawn in this order, two per row.
var panels = []string{
	"Partitions under / at min ISR",
	"Uncommitted backlog (LEO − HW)",
	"High watermark stalled",
	"Admin API up",
}

func main() {
	promURL := flag.String("prometheus", "http://127.0.0.1:9090", "Prometheus base URL")
	dashboard := flag.String("dashboard", "dashboards/kafka-replication-overview.json", "Grafana dashboard JSON")
	out := flag.String("out", "docs/dashboard.png", "PNG to write")
	start := flag.Int64("start", 0, "range start, Unix seconds")
	end := flag.Int64("end", 0, "range end, Unix seconds (default now)")
	step := flag.Duration("step", 2*time.Second, "query resolution")
	rateInterval := flag.String("rate-interval", "10s", "value of $__rate_interval")
	var marks markList
	flag.Var(&marks, "mark", "event line UNIXSECONDS:label (repeatable)")
	flag.Parse()
	if *start == 0 {
		log.Fatal("-start is required")
	}
	endT := time.Now()
	if *end != 0 {
		endT = time.Unix(*end, 0)
	}
	exprs, err := panelExprs(*dashboard)
	if err != nil {
		log.Fatal(err)
	}
	prom := &stack.Prometheus{URL: *promURL}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var charts []chart
	for _, title := range panels {
		queries, ok := exprs[title]
		if !ok {
			log.Fatalf("%s: no panel %q", *dashboard, title)
		}
		ch := chart{title: title, start: time.Unix(*start, 0), end: endT, marks: marks}
		for _, q := range queries {
			q = substitute(q, *rateInterval)
			series, err := prom.QueryRange(ctx, q, ch.start, ch.end, *step)
			if err != nil {
				log.Fatalf("%s: %v", title, err)
			}
			for _, s := range series {
				ch.series = append(ch.series, line{label: legend(s.Labels, len(queries) > 1, q), times: s.Times, values: s.Values})
			}
		}
		charts = append(charts, ch)
	}
	if err := writePNG(*out, charts); err != nil {
		log.Fatal(err)
	}
	fmt.Println(*out)
}

// panelExprs maps panel titles to their query expressions.
func panelExprs(path string) (map[string][]string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	type panel struct {
		Title   string  `json:"title"`
		Panels  []panel `json:"panels"`
		Targets []struct {
			Expr string `json:"expr"`
		} `json:"targets"`
	}
	var d struct {
		Panels []panel `json:"panels"`
	}
	if err := json.Unmarshal(b, &d); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	m := map[string][]string{}
	var walk func([]panel)
	walk = func(ps []panel) {
		for _, p := range ps {
			walk(p.Panels)
			for _, t := range p.Targets {
				m[p.Title] = append(m[p.Title], t.Expr)
			}
		}
	}
	walk(d.Panels)
	return m, nil
}

// substitute fills the dashboard's template variables: this cluster, all
// instances and topics.
func substitute(expr, rateInterval string) string {
	return strings.NewReplacer(
		"$cluster", "local",
		"$instance", ".*",
		"$topic", ".*",
		"$__rate_interval", rateInterval,
		"$__range", "1h",
	).Replace(expr)
}

// legend names a series by its label values; with several queries in one
// panel, the metric the query is about comes first.
func legend(labels map[string]string, several bool, expr string) string {
	var parts []string
	if several {
		for _, m := range []string{"under_min_isr", "at_min_isr"} {
			if strings.Contains(expr, "partition_"+m) {
				parts = append(parts, strings.ReplaceAll(m, "_", " "))
			}
		}
	}
	for _, k := range []string{"topic", "instance", "replica", "request", "file"} {
		if v, ok := labels[k]; ok {
			parts = append(parts, v)
		}
	}
	if len(parts) == 0 {
		return "value"
	}
	return strings.Join(parts, " ")
}

type mark struct {
	at    time.Time
	label string
}

type markList []mark

func (m *markList) String() string { return fmt.Sprint(*m) }

func (m *markList) Set(v string) error {
	ts, label, ok := strings.Cut(v, ":")
	if !ok {
		return fmt.Errorf("want UNIXSECONDS:label, got %q", v)
	}
	sec, err := strconv.ParseInt(ts, 10, 64)
	if err != nil {
		return err
	}
	*m = append(*m, mark{time.Unix(sec, 0), label})
	return nil
}
