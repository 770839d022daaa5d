// Command render draws docs/dashboard.png: a few panels of the Grafana
// overview dashboard (dashboards/kafka-replication-overview.json), with
// their own PromQL, over a time range of a running Prometheus. The alert-loop
// test runs it with RENDER_DASHBOARD=1 at the end of its failure scenario, so
// the picture shows what an operator would have seen.
//
// Grafana is not needed: the expressions are taken from the dashboard JSON,
// the template variables are substituted, and the series are drawn with
// gonum.org/v1/plot. This is a module of its own so that the plotting library
// and its fonts stay out of the exporter's go.mod.
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

	"github.com/prometheus/client_golang/api"
	promv1 "github.com/prometheus/client_golang/api/prometheus/v1"
	"github.com/prometheus/common/model"
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
	dashboard := flag.String("dashboard", "../../dashboards/kafka-replication-overview.json", "Grafana dashboard JSON")
	out := flag.String("out", "../../docs/dashboard.png", "PNG to write")
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
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	q := query{
		promURL:      *promURL,
		dashboard:    *dashboard,
		start:        time.Unix(*start, 0),
		end:          endT,
		step:         *step,
		rateInterval: *rateInterval,
		marks:        marks,
	}
	charts, err := q.charts(ctx)
	if err != nil {
		log.Fatal(err)
	}
	if err := writePNG(*out, charts); err != nil {
		log.Fatal(err)
	}
	fmt.Println(*out)
}

// query is what to draw: the dashboard's panels over a time range of one
// Prometheus.
type query struct {
	promURL, dashboard string
	start, end         time.Time
	step               time.Duration
	rateInterval       string
	marks              []mark
}

// charts runs every drawn panel's queries as range queries.
func (q query) charts(ctx context.Context) ([]chart, error) {
	exprs, err := panelExprs(q.dashboard)
	if err != nil {
		return nil, err
	}
	client, err := api.NewClient(api.Config{Address: q.promURL})
	if err != nil {
		return nil, err
	}
	prom := promv1.NewAPI(client)
	var charts []chart
	for _, title := range panels {
		queries, ok := exprs[title]
		if !ok {
			return nil, fmt.Errorf("%s: no panel %q", q.dashboard, title)
		}
		ch := chart{title: title, start: q.start, end: q.end, marks: q.marks}
		for _, expr := range queries {
			expr = substitute(expr, q.rateInterval)
			v, warnings, _, err := prom.QueryRange(ctx, expr, promv1.Range{Start: q.start, End: q.end, Step: q.step})
			if err != nil {
				return nil, fmt.Errorf("%s: %w", title, err)
			}
			for _, w := range warnings {
				log.Printf("%s: Prometheus warns: %s", title, w)
			}
			matrix, ok := v.(model.Matrix)
			if !ok {
				return nil, fmt.Errorf("%s: range query returned a %s, not a matrix", title, v.Type())
			}
			for _, s := range matrix {
				l := line{label: legend(s.Metric, len(queries) > 1, expr)}
				for _, p := range s.Values {
					l.times = append(l.times, p.Timestamp.Time())
					l.values = append(l.values, float64(p.Value))
				}
				ch.series = append(ch.series, l)
			}
		}
		charts = append(charts, ch)
	}
	return charts, nil
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
func legend(labels model.Metric, several bool, expr string) string {
	var parts []string
	if several {
		for _, m := range []string{"under_min_isr", "at_min_isr"} {
			if strings.Contains(expr, "partition_"+m) {
				parts = append(parts, strings.ReplaceAll(m, "_", " "))
			}
		}
	}
	for _, k := range []string{"topic", "instance", "replica", "request", "file"} {
		if v, ok := labels[model.LabelName(k)]; ok {
			parts = append(parts, string(v))
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
