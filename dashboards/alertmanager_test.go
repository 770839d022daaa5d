package dashboards

import (
	"regexp"
	"strings"
	"testing"
)

const alertmanagerFile = "deploy/alertmanager.yml"

// quorumConsequence is the sentence of every alert whose facts cannot change
// while the metadata quorum is down; the example Alertmanager inhibits
// exactly those alerts while KafkaMetadataQuorumUnavailable fires.
const quorumConsequence = "If KafkaMetadataQuorumUnavailable fires for this cluster, this is its consequence: see it first."

type inhibitRule struct {
	SourceMatchers []string `yaml:"source_matchers"`
	TargetMatchers []string `yaml:"target_matchers"`
	Equal          []string `yaml:"equal"`
}

var (
	alertnameMatcher = regexp.MustCompile(`^alertname(=~|=)"(.*)"$`)
	plainName        = regexp.MustCompile(`^[A-Za-z0-9]+$`)
)

// alertnames returns the alert names a matcher list names literally: the
// value of alertname="X", and the plain alternatives of alertname=~"X|Y".
func alertnames(matchers []string) []string {
	var out []string
	for _, m := range matchers {
		sub := alertnameMatcher.FindStringSubmatch(m)
		if sub == nil {
			continue
		}
		for _, alt := range strings.Split(sub[2], "|") {
			if plainName.MatchString(alt) {
				out = append(out, alt)
			}
		}
	}
	return out
}

// TestInhibitRulesNameAlerts fails when an inhibition names an alert the rule
// file does not have: a renamed alert would otherwise silently stop being
// inhibited, or stop inhibiting.
func TestInhibitRulesNameAlerts(t *testing.T) {
	var cfg struct {
		InhibitRules []inhibitRule `yaml:"inhibit_rules"`
	}
	readYAML(t, alertmanagerFile, &cfg)
	alerts := map[string]bool{}
	for _, r := range loadRules(t) {
		alerts[r.Alert] = r.Alert != ""
	}
	for i, ir := range cfg.InhibitRules {
		for _, name := range append(alertnames(ir.SourceMatchers), alertnames(ir.TargetMatchers)...) {
			if !alerts[name] {
				t.Errorf("%s: inhibit rule %d names %s, which is no alert in %s", alertmanagerFile, i, name, RulesFile)
			}
		}
	}
}

// TestQuorumInhibitionMatchesDescriptions ties the inhibition of the
// consequences of KafkaMetadataQuorumUnavailable to the alerts that say, in
// their description, that they are one: both ways, and per cluster.
func TestQuorumInhibitionMatchesDescriptions(t *testing.T) {
	var cfg struct {
		InhibitRules []inhibitRule `yaml:"inhibit_rules"`
	}
	readYAML(t, alertmanagerFile, &cfg)
	inhibited := map[string]bool{}
	for _, ir := range cfg.InhibitRules {
		if src := alertnames(ir.SourceMatchers); len(src) != 1 || src[0] != "KafkaMetadataQuorumUnavailable" {
			continue
		}
		if strings.Join(ir.Equal, ",") != ClusterLabel {
			t.Errorf("%s: the KafkaMetadataQuorumUnavailable inhibition has equal %v, want [%s]", alertmanagerFile, ir.Equal, ClusterLabel)
		}
		for _, name := range alertnames(ir.TargetMatchers) {
			inhibited[name] = true
		}
	}
	said := map[string]bool{}
	for _, r := range loadRules(t) {
		if r.Alert != "" && strings.Contains(r.Annotations["description"], quorumConsequence) {
			said[r.Alert] = true
			if !inhibited[r.Alert] {
				t.Errorf("%s says it is a consequence of KafkaMetadataQuorumUnavailable, but %s does not inhibit it", r.Alert, alertmanagerFile)
			}
		}
	}
	if len(said) == 0 {
		t.Errorf("no alert description says %q", quorumConsequence)
	}
	for name := range inhibited {
		if !said[name] && !strings.HasPrefix(name, "KafkaMetadataQuorum") && name != "KafkaBrokerMetadataStale" {
			t.Errorf("%s inhibits %s while KafkaMetadataQuorumUnavailable fires, but its description does not say %q", alertmanagerFile, name, quorumConsequence)
		}
	}
}
