package stack

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"go.yaml.in/yaml/v3"
)

// Alertmanager is a running Alertmanager.
type Alertmanager struct {
	URL  string // base URL
	proc *process
}

// Close stops Alertmanager.
func (a *Alertmanager) Close() { a.proc.stop() }

// StartAlertmanager writes dir/alertmanager.yml, routing every alert to
// webhookURL, and starts a single Alertmanager (no gossip cluster). The group
// timers are seconds, not the minutes of deploy/alertmanager.yml, so a test
// sees a notification, and the resolved one, right after Prometheus sends
// the alert. Grouping is the shipped one (cluster, alertname, topic), so each
// notification names one topic. It listens on a loopback port outside the
// ephemeral range, and starts again on another if that one was taken.
func StartAlertmanager(ctx context.Context, dir, webhookURL string) (*Alertmanager, error) {
	return StartAlertmanagerOn(ctx, "", dir, webhookURL)
}

// StartAlertmanagerOn is StartAlertmanager listening on addr (host:port); an
// empty addr is StartAlertmanager's choice.
func StartAlertmanagerOn(ctx context.Context, addr, dir, webhookURL string) (*Alertmanager, error) {
	return startAlertmanager(ctx, addr, dir, alertmanagerConfig(webhookURL, ""))
}

// StartAlertmanagerInhibiting is StartAlertmanager with the inhibit_rules of
// the Alertmanager configuration shippedConfig (deploy/alertmanager.yml), so
// a test sees which alerts the shipped inhibitions keep from paging.
func StartAlertmanagerInhibiting(ctx context.Context, dir, webhookURL, shippedConfig string) (*Alertmanager, error) {
	inhibit, err := inhibitRules(shippedConfig)
	if err != nil {
		return nil, err
	}
	return startAlertmanager(ctx, "", dir, alertmanagerConfig(webhookURL, inhibit))
}

func startAlertmanager(ctx context.Context, addr, dir, config string) (*Alertmanager, error) {
	bin, err := Tool("alertmanager")
	if err != nil {
		return nil, err
	}
	cfgPath := filepath.Join(dir, "alertmanager.yml")
	if err := os.WriteFile(cfgPath, []byte(config), 0o644); err != nil {
		return nil, err
	}
	start := func(addr string) (*process, error) {
		return startProcess("alertmanager", filepath.Join(dir, "alertmanager.log"), bin,
			"--config.file="+cfgPath,
			"--storage.path="+filepath.Join(dir, "alertmanager-data"),
			"--web.listen-address="+addr,
			"--cluster.listen-address=", // no gossip: one instance, no port to collide
			"--log.level=warn",
		)
	}
	ready := func(proc *process, addr string) error { return proc.waitReady(ctx, "http://"+addr+"/-/ready") }
	proc, addr, err := startOnFreeAddr(addr, start, ready)
	if err != nil {
		return nil, err
	}
	return &Alertmanager{URL: "http://" + addr, proc: proc}, nil
}

// inhibitRules returns the inhibit_rules of an Alertmanager configuration
// file as YAML, "inhibit_rules:" included.
func inhibitRules(path string) (string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return "", err
	}
	var cfg struct {
		InhibitRules []map[string]any `yaml:"inhibit_rules"`
	}
	if err := yaml.Unmarshal(b, &cfg); err != nil {
		return "", fmt.Errorf("%s: %w", path, err)
	}
	if len(cfg.InhibitRules) == 0 {
		return "", fmt.Errorf("%s: no inhibit_rules", path)
	}
	out, err := yaml.Marshal(map[string]any{"inhibit_rules": cfg.InhibitRules})
	return string(out), err
}

func alertmanagerConfig(webhookURL, inhibit string) string {
	receiver := "  - name: webhook\n"
	if webhookURL != "" {
		receiver += fmt.Sprintf("    webhook_configs:\n      - url: %q\n        send_resolved: true\n", webhookURL)
	}
	return `global:
  resolve_timeout: 1m
route:
  receiver: webhook
  group_by: [cluster, alertname, topic]
  group_wait: 1s
  group_interval: 1s
  repeat_interval: 1h
receivers:
` + receiver + inhibit
}
