package stack

import (
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// The test Alertmanager carries deploy/alertmanager.yml's inhibitions as
// shipped, the quorum's among them, in a configuration that still parses.
func TestAlertmanagerConfigCarriesShippedInhibitions(t *testing.T) {
	inhibit, err := inhibitRules("../../deploy/alertmanager.yml")
	if err != nil {
		t.Fatal(err)
	}
	var cfg struct {
		Receivers    []map[string]any `yaml:"receivers"`
		InhibitRules []struct {
			SourceMatchers []string `yaml:"source_matchers"`
			Equal          []string `yaml:"equal"`
		} `yaml:"inhibit_rules"`
	}
	if err := yaml.Unmarshal([]byte(alertmanagerConfig("http://127.0.0.1:1/hook", inhibit)), &cfg); err != nil {
		t.Fatal(err)
	}
	if len(cfg.Receivers) != 1 {
		t.Errorf("receivers %v, want the webhook only", cfg.Receivers)
	}
	found := false
	for _, r := range cfg.InhibitRules {
		if strings.Contains(strings.Join(r.SourceMatchers, ","), "KafkaMetadataQuorumUnavailable") && strings.Join(r.Equal, ",") == "cluster" {
			found = true
		}
	}
	if !found {
		t.Errorf("no inhibition by KafkaMetadataQuorumUnavailable on cluster in %+v", cfg.InhibitRules)
	}
	if _, err := inhibitRules("alertmanager.go"); err == nil {
		t.Error("a file without inhibit_rules gave no error")
	}
}
