package stack

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// Target is one scrape target.
type Target struct {
	Addr     string // host:port
	Instance string // the instance label (e.g. kafka-1)
}

// Prometheus is a running Prometheus server.
type Prometheus struct {
	URL  string // base URL, e.g. http://127.0.0.1:9090
	proc *process
}

// Close stops Prometheus.
func (p *Prometheus) Close() { p.proc.stop() }

// StartPrometheus writes dir/prometheus.yml and starts Prometheus with its
// data in dir/prometheus-data. Every target gets cluster="local" and its own
// instance label; rules and scrapes run every scrapeInterval (1–2 s keeps an
// end-to-end test short). alertmanagerURL may be empty (no alerting). It
// waits until Prometheus is ready. It listens on a free loopback port.
func StartPrometheus(
	ctx context.Context, dir string, targets []Target, ruleFiles []string, alertmanagerURL string, scrapeInterval time.Duration,
) (*Prometheus, error) {
	addr, err := freeAddr()
	if err != nil {
		return nil, err
	}
	return StartPrometheusOn(ctx, addr, dir, targets, ruleFiles, alertmanagerURL, scrapeInterval)
}

// StartPrometheusOn is StartPrometheus listening on addr (host:port), for a
// program whose URLs should stay the same from run to run (make run).
func StartPrometheusOn(
	ctx context.Context, addr, dir string, targets []Target, ruleFiles []string, alertmanagerURL string, scrapeInterval time.Duration,
) (*Prometheus, error) {
	bin, err := Tool("prometheus")
	if err != nil {
		return nil, err
	}
	cfg := prometheusConfig(targets, ruleFiles, alertmanagerURL, scrapeInterval)
	cfgPath := filepath.Join(dir, "prometheus.yml")
	if err := os.WriteFile(cfgPath, []byte(cfg), 0o644); err != nil {
		return nil, err
	}
	proc, err := startProcess("prometheus", filepath.Join(dir, "prometheus.log"), bin,
		"--config.file="+cfgPath,
		"--storage.tsdb.path="+filepath.Join(dir, "prometheus-data"),
		"--web.listen-address="+addr,
		"--log.level=warn",
	)
	if err != nil {
		return nil, err
	}
	p := &Prometheus{URL: "http://" + addr, proc: proc}
	if err := proc.waitReady(ctx, p.URL+"/-/ready"); err != nil {
		p.Close()
		return nil, err
	}
	return p, nil
}

// prometheusConfig renders prometheus.yml. The labels are set per target, as
// an operator's service discovery would, since the exporter sets none.
func prometheusConfig(targets []Target, ruleFiles []string, alertmanagerURL string, interval time.Duration) string {
	var b strings.Builder
	fmt.Fprintf(&b, "global:\n  scrape_interval: %s\n  evaluation_interval: %s\n  scrape_timeout: %s\n",
		interval, interval, interval)
	if len(ruleFiles) > 0 {
		b.WriteString("rule_files:\n")
		for _, f := range ruleFiles {
			fmt.Fprintf(&b, "  - %q\n", f)
		}
	}
	if alertmanagerURL != "" {
		u, _ := url.Parse(alertmanagerURL)
		fmt.Fprintf(&b, "alerting:\n  alertmanagers:\n    - static_configs:\n        - targets: [%q]\n", u.Host)
	}
	b.WriteString("scrape_configs:\n  - job_name: kafka-replication\n    static_configs:\n")
	for _, t := range targets {
		fmt.Fprintf(&b, "      - targets: [%q]\n        labels: {cluster: local, instance: %q}\n", t.Addr, t.Instance)
	}
	return b.String()
}

// Sample is one value of an instant query result.
type Sample struct {
	Labels map[string]string
	Value  float64
}

// Series is one series of a range query result.
type Series struct {
	Labels map[string]string
	Times  []time.Time
	Values []float64
}

// Query runs an instant PromQL query.
func (p *Prometheus) Query(ctx context.Context, expr string) ([]Sample, error) {
	var res []struct {
		Metric map[string]string `json:"metric"`
		Value  [2]any            `json:"value"`
	}
	if err := p.api(ctx, "query", url.Values{"query": {expr}}, &res); err != nil {
		return nil, err
	}
	samples := make([]Sample, 0, len(res))
	for _, r := range res {
		v, err := apiFloat(r.Value[1])
		if err != nil {
			return nil, err
		}
		samples = append(samples, Sample{Labels: r.Metric, Value: v})
	}
	return samples, nil
}

// QueryRange runs a range PromQL query.
func (p *Prometheus) QueryRange(ctx context.Context, expr string, start, end time.Time, step time.Duration) ([]Series, error) {
	var res []struct {
		Metric map[string]string `json:"metric"`
		Values [][2]any          `json:"values"`
	}
	q := url.Values{
		"query": {expr},
		"start": {strconv.FormatInt(start.Unix(), 10)},
		"end":   {strconv.FormatInt(end.Unix(), 10)},
		"step":  {step.String()},
	}
	if err := p.api(ctx, "query_range", q, &res); err != nil {
		return nil, err
	}
	var out []Series
	for _, r := range res {
		s := Series{Labels: r.Metric}
		for _, tv := range r.Values {
			ts, ok := tv[0].(float64)
			if !ok {
				return nil, fmt.Errorf("query_range: bad timestamp %v", tv[0])
			}
			v, err := apiFloat(tv[1])
			if err != nil {
				return nil, err
			}
			s.Times = append(s.Times, time.Unix(0, int64(ts*1e9)))
			s.Values = append(s.Values, v)
		}
		out = append(out, s)
	}
	return out, nil
}

// api calls /api/v1/<path> and decodes data.result into result.
func (p *Prometheus) api(ctx context.Context, path string, q url.Values, result any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, p.URL+"/api/v1/"+path+"?"+q.Encode(), nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	var body struct {
		Status string `json:"status"`
		Error  string `json:"error"`
		Data   struct {
			Result json.RawMessage `json:"result"`
		} `json:"data"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		return fmt.Errorf("%s: %s: %w", path, resp.Status, err)
	}
	if body.Status != "success" {
		return fmt.Errorf("%s %q: %s", path, q.Get("query"), body.Error)
	}
	return json.Unmarshal(body.Data.Result, result)
}

// apiFloat decodes a sample value, which the API sends as a string.
func apiFloat(v any) (float64, error) {
	s, ok := v.(string)
	if !ok {
		return 0, fmt.Errorf("sample value %v is not a string", v)
	}
	return strconv.ParseFloat(s, 64)
}
