package stack

import (
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"
)

func TestScaleRules(t *testing.T) {
	src := `# header comment survives
groups:
  - name: g
    interval: 1m
    rules:
      - alert: Long
        # why 15m
        expr: |
          sum(increase(x_total[30m])) > 0
            and y <= y offset 10m
            and max_over_time(z[1h:1m]) > 1
        for: 15m
        keep_firing_for: 2m
        labels: {severity: critical, window: "[30m]"}
      - alert: Short
        expr: up == 0
        for: 30s
      - record: job:x:rate5m
        expr: rate(x_total[5m])
`
	got, err := ScaleRules([]byte(src), 30, 2*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Groups []struct {
			Interval string `yaml:"interval"`
			Rules    []struct {
				Alert, Record, Expr, For string
				KeepFiringFor            string            `yaml:"keep_firing_for"`
				Labels                   map[string]string `yaml:"labels"`
			} `yaml:"rules"`
		} `yaml:"groups"`
	}
	if err := yaml.Unmarshal(got, &doc); err != nil {
		t.Fatalf("scaled file is not YAML: %v\n%s", err, got)
	}
	rules := doc.Groups[0].Rules
	want := []struct{ expr, forDur, keep string }{
		{"sum(increase(x_total[60s])) > 0\n  and y <= y offset 20s\n  and max_over_time(z[120s:1m]) > 1\n", "30s", "4s"},
		{"up == 0", "2s", ""}, // 30s/30 = 1s, below the floor
		{"rate(x_total[10s])", "", ""},
	}
	for i, w := range want {
		r := rules[i]
		if r.Expr != w.expr || r.For != w.forDur || r.KeepFiringFor != w.keep {
			t.Errorf("rule %d: expr %q for %q keep_firing_for %q; want %q, %q, %q",
				i, r.Expr, r.For, r.KeepFiringFor, w.expr, w.forDur, w.keep)
		}
	}
	if doc.Groups[0].Interval != "1m" {
		t.Errorf("group interval = %q, want it untouched", doc.Groups[0].Interval)
	}
	if l := rules[0].Labels["window"]; l != "[30m]" {
		t.Errorf("label value rewritten to %q: only expr is PromQL", l)
	}
	for _, c := range []string{"# header comment survives", "# why 15m"} {
		if !strings.Contains(string(got), c) {
			t.Errorf("comment %q lost:\n%s", c, got)
		}
	}
}

func TestScaleRulesErrors(t *testing.T) {
	for name, src := range map[string]string{
		"not yaml":     "groups: [",
		"no groups":    "rules: []",
		"bad for":      "groups:\n  - name: g\n    rules:\n      - alert: A\n        expr: up\n        for: soon\n",
		"missing expr": "groups:\n  - name: g\n    rules:\n      - alert: A\n        for: 1m\n",
	} {
		if _, err := ScaleRules([]byte(src), 30, time.Second); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
	if _, err := ScaleRules([]byte("groups: []"), 0, time.Second); err == nil {
		t.Error("factor 0: no error")
	}
}

// The shipped rule file scales without error, and every duration left in it
// is the scaled one.
func TestScaleShippedRules(t *testing.T) {
	src, err := os.ReadFile("../../alerts/kafka-replication.rules.yml")
	if err != nil {
		t.Fatal(err)
	}
	got, err := ScaleRules(src, 30, 2*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"for: 4s", "[60s]", "[2880s]"} { // 2m, 30m, 1d
		if !strings.Contains(string(got), want) {
			t.Errorf("scaled rules lack %q", want)
		}
	}
	if m := regexp.MustCompile(`\[\d+[mhd]\]|offset \d+[mhd]|for: \d+[mh]`).FindString(string(got)); m != "" {
		t.Errorf("unscaled duration %q left in the scaled rules", m)
	}
}
