package dashboards

import (
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

const runbookBase = "https://github.com/kafka-replication-exporter/kafka_replication_exporter/blob/main/alerts/runbook.md#"

type ruleGroups struct {
	Groups []struct {
		Name  string `yaml:"name"`
		Rules []rule `yaml:"rules"`
	} `yaml:"groups"`
}

type rule struct {
	Alert       string            `yaml:"alert"`
	Record      string            `yaml:"record"`
	Expr        string            `yaml:"expr"`
	For         string            `yaml:"for"`
	Labels      map[string]string `yaml:"labels"`
	Annotations map[string]string `yaml:"annotations"`
}

func readYAML(t *testing.T, name string, v any) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(repoRoot, name))
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(data, v); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
}

func loadRules(t *testing.T) []rule {
	t.Helper()
	var f ruleGroups
	readYAML(t, RulesFile, &f)
	var rules []rule
	for _, g := range f.Groups {
		rules = append(rules, g.Rules...)
	}
	if len(rules) == 0 {
		t.Fatalf("%s: no rules", RulesFile)
	}
	return rules
}

var alertName = regexp.MustCompile(`^Kafka[A-Z][A-Za-z0-9]*$`)

func TestAlertConventions(t *testing.T) {
	for _, r := range loadRules(t) {
		if r.Alert == "" {
			continue
		}
		if !alertName.MatchString(r.Alert) {
			t.Errorf("%s: alert names are CamelCase and start with Kafka", r.Alert)
		}
		if len(r.Labels) != 1 {
			t.Errorf("%s: labels %v, want severity only (users add routing labels in Alertmanager)", r.Alert, r.Labels)
		}
		switch r.Labels["severity"] {
		case "critical", "warning", "info":
		default:
			t.Errorf("%s: severity %q, want critical, warning or info", r.Alert, r.Labels["severity"])
		}
		summary := r.Annotations["summary"]
		if summary == "" || strings.Contains(summary, "{{") || !strings.HasSuffix(summary, ".") {
			t.Errorf("%s: summary %q must be a static sentence ending in a period", r.Alert, summary)
		}
		if !strings.Contains(r.Annotations["description"], "{{") {
			t.Errorf("%s: description must be templated", r.Alert)
		}
		if want := runbookBase + strings.ToLower(r.Alert); r.Annotations["runbook_url"] != want {
			t.Errorf("%s: runbook_url %q, want %q", r.Alert, r.Annotations["runbook_url"], want)
		}
		if len(r.Annotations) != 3 {
			t.Errorf("%s: annotations %v, want summary, description, runbook_url", r.Alert, keys(r.Annotations))
		}
	}
}

// TestRunbookCoversAlerts ties the runbook's "## AlertName" headings (GitHub
// anchor: the lowercased name) to the alert names, both ways.
func TestRunbookCoversAlerts(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(repoRoot, "alerts/runbook.md"))
	if err != nil {
		t.Fatal(err)
	}
	sections := map[string]bool{}
	for _, m := range regexp.MustCompile(`(?m)^## (\S+)\s*$`).FindAllStringSubmatch(string(data), -1) {
		sections[m[1]] = true
	}
	alerts := map[string]bool{}
	for _, r := range loadRules(t) {
		if r.Alert != "" {
			alerts[r.Alert] = true
			if !sections[r.Alert] {
				t.Errorf("alerts/runbook.md has no section \"## %s\"", r.Alert)
			}
		}
	}
	for s := range sections {
		if !alerts[s] {
			t.Errorf("alerts/runbook.md: section %q names no alert", s)
		}
	}
}

// TestEveryAlertIsTested requires, per alert, a promtool case that expects it
// to fire and one that expects it quiet.
func TestEveryAlertIsTested(t *testing.T) {
	type testFile struct {
		Tests []struct {
			AlertRuleTest []struct {
				Alertname string           `yaml:"alertname"`
				ExpAlerts []map[string]any `yaml:"exp_alerts"`
			} `yaml:"alert_rule_test"`
		} `yaml:"tests"`
	}
	names, err := filepath.Glob(filepath.Join(repoRoot, "alerts/tests/*.yml"))
	if err != nil || len(names) == 0 {
		t.Fatalf("no alerts/tests/*.yml (%v)", err)
	}
	fires, quiet := map[string]bool{}, map[string]bool{}
	for _, name := range names {
		var f testFile
		readYAML(t, strings.TrimPrefix(name, repoRoot+"/"), &f)
		for _, tc := range f.Tests {
			for _, a := range tc.AlertRuleTest {
				if len(a.ExpAlerts) > 0 {
					fires[a.Alertname] = true
				} else {
					quiet[a.Alertname] = true
				}
			}
		}
	}
	for _, r := range loadRules(t) {
		if r.Alert == "" {
			continue
		}
		if !fires[r.Alert] {
			t.Errorf("%s: no promtool test expects it to fire", r.Alert)
		}
		if !quiet[r.Alert] {
			t.Errorf("%s: no promtool test expects it to stay quiet", r.Alert)
		}
	}
}

// TestPrometheusRuleInSync compares the operator wrapper with the rule file
// structurally, in case someone edits the generated file by hand.
func TestPrometheusRuleInSync(t *testing.T) {
	var plain map[string]any
	readYAML(t, RulesFile, &plain)
	var wrapped struct {
		APIVersion string         `yaml:"apiVersion"`
		Kind       string         `yaml:"kind"`
		Spec       map[string]any `yaml:"spec"`
	}
	readYAML(t, PrometheusRuleFile, &wrapped)
	if wrapped.APIVersion != "monitoring.coreos.com/v1" || wrapped.Kind != "PrometheusRule" {
		t.Errorf("%s: %s/%s, want monitoring.coreos.com/v1/PrometheusRule", PrometheusRuleFile, wrapped.APIVersion, wrapped.Kind)
	}
	if !reflect.DeepEqual(wrapped.Spec, plain) {
		t.Errorf("%s: spec differs from %s; run: cd dashboards && go generate ./...", PrometheusRuleFile, RulesFile)
	}
}

func keys(m map[string]string) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}
