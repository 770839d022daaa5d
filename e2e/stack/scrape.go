package stack

import (
	"context"
	"fmt"
	"net/http"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// Metrics is one scrape: metric families by name.
type Metrics map[string]*dto.MetricFamily

// Scrape fetches and parses an exporter's /metrics in the text format.
func Scrape(ctx context.Context, url string) (Metrics, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	// The text format, not protobuf or OpenMetrics: the parser below reads it.
	req.Header.Set("Accept", "text/plain;version=0.0.4")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("scrape %s: %s", url, resp.Status)
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	mfs, err := parser.TextToMetricFamilies(resp.Body)
	if err != nil {
		return nil, fmt.Errorf("scrape %s: %w", url, err)
	}
	return Metrics(mfs), nil
}

// Value returns the value of the series of metric name whose labels include
// all of match, and whether there is exactly one such series.
func (m Metrics) Value(name string, match map[string]string) (float64, bool) {
	var v float64
	n := 0
	m.each(name, match, func(x float64) { v = x; n++ })
	return v, n == 1
}

// Count returns how many series of metric name have labels including match.
func (m Metrics) Count(name string, match map[string]string) int {
	n := 0
	m.each(name, match, func(float64) { n++ })
	return n
}

// Sum adds the values of every series of metric name whose labels include
// all of match (0 when there is none: a counter not yet created).
func (m Metrics) Sum(name string, match map[string]string) float64 {
	var s float64
	m.each(name, match, func(x float64) { s += x })
	return s
}

func (m Metrics) each(name string, match map[string]string, f func(float64)) {
	mf := m[name]
	if mf == nil {
		return
	}
	for _, metric := range mf.GetMetric() {
		if !hasLabels(metric, match) {
			continue
		}
		switch {
		case metric.Gauge != nil:
			f(metric.Gauge.GetValue())
		case metric.Counter != nil:
			f(metric.Counter.GetValue())
		case metric.Untyped != nil:
			f(metric.Untyped.GetValue())
		}
	}
}

func hasLabels(metric *dto.Metric, match map[string]string) bool {
	found := 0
	for _, lp := range metric.GetLabel() {
		if want, ok := match[lp.GetName()]; ok {
			if lp.GetValue() != want {
				return false
			}
			found++
		}
	}
	return found == len(match)
}
