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
	URL         string // base URL, e.g. http://127.0.0.1:9090
	proc        *process
	targetsPath string // the file_sd file its scrape targets are read from
}

// Close stops Prometheus.
func (p *Prometheus) Close() { p.proc.stop() }

// StartPrometheus writes dir/prometheus.yml and starts Prometheus with its
// data in dir/prometheus-data. Every target gets cluster="local" and its own
// instance label; rules and scrapes run every scrapeInterval (1–2 s keeps an
// end-to-end test short). alertmanagerURL may be empty (no alerting). It
// waits until Prometheus is ready. It listens on a loopback port outside the
// ephemeral range, and starts again on another if that one was taken.
func StartPrometheus(
	ctx context.Context, dir string, targets []Target, ruleFiles []string, alertmanagerURL string, scrapeInterval time.Duration,
) (*Prometheus, error) {
	return StartPrometheusOn(ctx, "", dir, targets, ruleFiles, alertmanagerURL, scrapeInterval)
}

// StartPrometheusOn is StartPrometheus listening on addr (host:port), for a
// program whose URLs should stay the same from run to run (make run); an
// empty addr is StartPrometheus's choice.
func StartPrometheusOn(
	ctx context.Context, addr, dir string, targets []Target, ruleFiles []string, alertmanagerURL string, scrapeInterval time.Duration,
) (*Prometheus, error) {
	return startPrometheus(ctx, addr, dir, targets, ruleFiles, alertmanagerURL, scrapeInterval, "")
}

// StartPrometheusRelabeled is StartPrometheus with relabelConfigs (YAML: the
// entries of the job's relabel_configs list, each starting with "- ")
// applied to its targets, so that a shard of a sharded setup keeps only its
// part of them.
func StartPrometheusRelabeled(
	ctx context.Context, dir string, targets []Target, ruleFiles []string, alertmanagerURL string, scrapeInterval time.Duration,
	relabelConfigs string,
) (*Prometheus, error) {
	return startPrometheus(ctx, "", dir, targets, ruleFiles, alertmanagerURL, scrapeInterval, relabelConfigs)
}

func startPrometheus(
	ctx context.Context, addr, dir string, targets []Target, ruleFiles []string, alertmanagerURL string, scrapeInterval time.Duration,
	relabelConfigs string,
) (*Prometheus, error) {
	bin, err := Tool("prometheus")
	if err != nil {
		return nil, err
	}
	p := &Prometheus{targetsPath: filepath.Join(dir, "targets.json")}
	if err := p.SetTargets(targets); err != nil {
		return nil, err
	}
	cfg := prometheusConfig(p.targetsPath, ruleFiles, alertmanagerURL, scrapeInterval, relabelConfigs)
	cfgPath := filepath.Join(dir, "prometheus.yml")
	if err := os.WriteFile(cfgPath, []byte(cfg), 0o644); err != nil {
		return nil, err
	}
	start := func(addr string) (*process, error) {
		return startProcess("prometheus", filepath.Join(dir, "prometheus.log"), bin,
			"--config.file="+cfgPath,
			"--storage.tsdb.path="+filepath.Join(dir, "prometheus-data"),
			"--web.listen-address="+addr,
			"--log.level=warn",
		)
	}
	ready := func(proc *process, addr string) error { return proc.waitReady(ctx, "http://"+addr+"/-/ready") }
	if p.proc, addr, err = startOnFreeAddr(addr, start, ready); err != nil {
		return nil, err
	}
	p.URL = "http://" + addr
	return p, nil
}

// SetTargets replaces the scrape targets. Prometheus reads them from a file
// (file_sd), rewritten here through a rename, so that a scenario whose
// sidecar restarts (on a new port) points Prometheus at its new address;
// Prometheus sees the change within a scrape interval.
func (p *Prometheus) SetTargets(targets []Target) error {
	type group struct {
		Targets []string          `json:"targets"`
		Labels  map[string]string `json:"labels"`
	}
	groups := make([]group, 0, len(targets))
	for _, t := range targets {
		groups = append(groups, group{Targets: []string{t.Addr}, Labels: map[string]string{"cluster": "local", "instance": t.Instance}})
	}
	b, err := json.MarshalIndent(groups, "", "  ")
	if err != nil {
		return err
	}
	tmp := p.targetsPath + ".tmp"
	if err := os.WriteFile(tmp, append(b, '\n'), 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, p.targetsPath)
}

// prometheusConfig renders prometheus.yml. The labels are set per target, as
// an operator's service discovery would, since the exporter sets none; the
// targets are in targetsPath (see SetTargets); relabelConfigs, if not
// empty, is indented under the job's relabel_configs.
func prometheusConfig(targetsPath string, ruleFiles []string, alertmanagerURL string, interval time.Duration, relabelConfigs string) string {
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
	fmt.Fprintf(&b, "scrape_configs:\n  - job_name: kafka-replication\n    file_sd_configs:\n      - files: [%q]\n        refresh_interval: %s\n",
		targetsPath, interval)
	if relabelConfigs != "" {
		b.WriteString("    relabel_configs:\n")
		for _, line := range strings.Split(strings.TrimRight(relabelConfigs, "\n"), "\n") {
			b.WriteString("      " + line + "\n")
		}
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
