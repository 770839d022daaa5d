package dashboards

import (
	"bytes"
	"errors"
	"strings"
)

// RulesFile and PrometheusRuleFile are repository-relative paths.
const (
	RulesFile          = "alerts/kafka-replication.rules.yml"
	PrometheusRuleFile = "deploy/prometheus-rule.yaml"
)

const prometheusRuleHeader = `# Generated from alerts/kafka-replication.rules.yml by dashboards/cmd/gen; do not edit.
# The same alert groups as a prometheus-operator PrometheusRule. Add the labels
# your Prometheus' ruleSelector expects (e.g. release: kube-prometheus-stack).
apiVersion: monitoring.coreos.com/v1
kind: PrometheusRule
metadata:
  name: kafka-replication
  labels:
    app.kubernetes.io/name: kafka_replication_exporter
    app.kubernetes.io/component: alerting
spec:
`

// PrometheusRule wraps the rule file's groups into a PrometheusRule. It
// indents the text rather than re-encoding the YAML, so the comments and the
// block-style expressions survive exactly as written.
func PrometheusRule(rules []byte) ([]byte, error) {
	start := bytes.Index(rules, []byte("\ngroups:\n"))
	if start < 0 {
		return nil, errors.New(RulesFile + ": no top-level groups: key")
	}
	var out bytes.Buffer
	out.WriteString(prometheusRuleHeader)
	for _, line := range strings.SplitAfter(string(rules[start+1:]), "\n") {
		if strings.TrimSpace(line) != "" {
			out.WriteString("  ")
		}
		out.WriteString(line)
	}
	return out.Bytes(), nil
}
