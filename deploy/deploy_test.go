package deploy

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"go.yaml.in/yaml/v2"
)

// decodeAll decodes every YAML document of a file (Kubernetes manifests have
// several) into generic maps.
func decodeAll(t *testing.T, path string) []map[string]any {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	dec := yaml.NewDecoder(bytes.NewReader(raw))
	var docs []map[string]any
	for {
		var doc map[string]any
		err := dec.Decode(&doc)
		if errors.Is(err, io.EOF) {
			return docs
		}
		if err != nil {
			t.Fatalf("%s: document %d: %v", path, len(docs)+1, err)
		}
		if doc != nil {
			docs = append(docs, doc)
		}
	}
}

// get walks a decoded document: string keys for maps, ints for lists.
func get(v any, path ...any) any {
	for _, p := range path {
		switch k := p.(type) {
		case string:
			m, ok := v.(map[any]any)
			if !ok {
				if sm, ok := v.(map[string]any); ok {
					v = sm[k]
					continue
				}
				return nil
			}
			v = m[k]
		case int:
			l, ok := v.([]any)
			if !ok || k >= len(l) {
				return nil
			}
			v = l[k]
		}
	}
	return v
}

func TestEveryYAMLParses(t *testing.T) {
	var files []string
	err := filepath.WalkDir(".", func(path string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && (strings.HasSuffix(path, ".yaml") || strings.HasSuffix(path, ".yml")) {
			files = append(files, path)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(files) < 4 {
		t.Fatalf("found only %v", files)
	}
	for _, f := range files {
		if docs := decodeAll(t, f); len(docs) == 0 {
			t.Errorf("%s: no YAML document", f)
		}
	}
}

// sidecar returns the exporter container of the pod manifest.
func sidecar(t *testing.T, docs []map[string]any) (pod map[string]any, container map[any]any) {
	t.Helper()
	for _, d := range docs {
		if d["kind"] != "Pod" {
			continue
		}
		containers, _ := get(d, "spec", "containers").([]any)
		for _, c := range containers {
			if cm, ok := c.(map[any]any); ok && cm["name"] == "kafka-replication-exporter" {
				return d, cm
			}
		}
	}
	t.Fatal("no Pod with a kafka-replication-exporter container")
	return nil, nil
}

func TestKubernetesPod(t *testing.T) {
	docs := decodeAll(t, "kubernetes/pod.yaml")
	pod, c := sidecar(t, docs)

	var args []string
	for _, a := range c["args"].([]any) {
		args = append(args, a.(string))
	}
	checkArgs(t, "kubernetes/pod.yaml", args)
	for _, want := range []string{"server.log", "state-change.log", "controller.log"} {
		if !strings.Contains(strings.Join(args, " "), "/"+want) {
			t.Errorf("sidecar does not follow %s", want)
		}
	}

	if get(pod, "spec", "securityContext", "fsGroup") == nil {
		t.Error("no pod securityContext.fsGroup: a non-root sidecar may not be able to read the logs")
	}
	if get(c, "securityContext", "readOnlyRootFilesystem") != true {
		t.Error("sidecar: want readOnlyRootFilesystem: true")
	}
	if get(c, "securityContext", "runAsNonRoot") != true {
		t.Error("sidecar: want runAsNonRoot: true")
	}
	if p := get(c, "livenessProbe", "httpGet", "path"); p != "/-/healthy" {
		t.Errorf("liveness probe path %v, want /-/healthy", p)
	}
	if p := get(c, "readinessProbe", "httpGet", "path"); p != "/-/ready" {
		t.Errorf("readiness probe path %v, want /-/ready", p)
	}
	if p := get(c, "ports", 0, "containerPort"); p != 9742 {
		t.Errorf("container port %v, want 9742", p)
	}

	// The log volume is shared with the broker and read-only in the sidecar;
	// the position file is on a writable volume.
	mounts, _ := c["volumeMounts"].([]any)
	var logMount, stateMount map[any]any
	for _, m := range mounts {
		mm := m.(map[any]any)
		switch {
		case strings.HasPrefix(mm["mountPath"].(string), "/var/log/kafka"):
			logMount = mm
		case strings.HasPrefix(mm["mountPath"].(string), "/var/lib/kre"):
			stateMount = mm
		}
	}
	if logMount == nil || logMount["readOnly"] != true {
		t.Errorf("sidecar log mount %v, want /var/log/kafka readOnly", logMount)
	}
	if stateMount == nil || stateMount["readOnly"] == true {
		t.Errorf("sidecar state mount %v, want a writable /var/lib/kre for the position file", stateMount)
	}
	shared := false
	containers, _ := get(pod, "spec", "containers").([]any)
	for _, other := range containers {
		om := other.(map[any]any)
		if om["name"] == c["name"] {
			continue
		}
		for _, m := range om["volumeMounts"].([]any) {
			shared = shared || m.(map[any]any)["name"] == logMount["name"]
		}
	}
	if !shared {
		t.Error("the broker container does not mount the sidecar's log volume")
	}

	hasService := false
	for _, d := range docs {
		hasService = hasService || d["kind"] == "Service"
	}
	if !hasService {
		t.Error("no Service for scraping")
	}
}

// systemdUnit parses a unit file into section → key → values, joining
// backslash continuations.
func systemdUnit(t *testing.T, path string) map[string]map[string][]string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	unit := map[string]map[string][]string{}
	section, logical := "", ""
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if logical == "" && (line == "" || strings.HasPrefix(line, "#") || strings.HasPrefix(line, ";")) {
			continue
		}
		if strings.HasSuffix(line, "\\") {
			logical += strings.TrimSuffix(line, "\\") + " "
			continue
		}
		line, logical = logical+line, ""
		if strings.HasPrefix(line, "[") && strings.HasSuffix(line, "]") {
			section = line[1 : len(line)-1]
			unit[section] = map[string][]string{}
			continue
		}
		key, value, ok := strings.Cut(line, "=")
		if !ok || section == "" {
			t.Fatalf("%s:%d: not a key=value line in a section: %q", path, n, line)
		}
		unit[section][strings.TrimSpace(key)] = append(unit[section][strings.TrimSpace(key)], strings.TrimSpace(value))
	}
	return unit
}

func TestSystemdUnit(t *testing.T) {
	unit := systemdUnit(t, "systemd/kafka_replication_exporter.service")
	for _, s := range []string{"Unit", "Service", "Install"} {
		if unit[s] == nil {
			t.Errorf("no [%s] section", s)
		}
	}
	svc := unit["Service"]
	exec := svc["ExecStart"]
	if len(exec) != 1 {
		t.Fatalf("ExecStart %q, want exactly one", exec)
	}
	argv := strings.Fields(exec[0])
	if argv[0] != "/usr/local/bin/kafka_replication_exporter" {
		t.Errorf("ExecStart runs %s", argv[0])
	}
	checkArgs(t, "systemd ExecStart", argv[1:])
	for key, want := range map[string]string{
		"ProtectSystem":       "strict",
		"SupplementaryGroups": "kafka",
		"ReadOnlyPaths":       "/var/log/kafka",
		"StateDirectory":      "kafka_replication_exporter",
		"NoNewPrivileges":     "yes",
	} {
		if got := svc[key]; len(got) != 1 || got[0] != want {
			t.Errorf("%s=%q, want %s", key, got, want)
		}
	}
	if svc["DynamicUser"] == nil && svc["User"] == nil {
		t.Error("neither DynamicUser nor User: the exporter would run as root")
	}
	// The position file must be in the StateDirectory, the only writable path.
	if !strings.Contains(exec[0], "--log.position-file=/var/lib/kafka_replication_exporter/") {
		t.Error("--log.position-file is not in /var/lib/<StateDirectory>")
	}

	env, err := os.ReadFile("systemd/kafka_replication_exporter.env")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(env), "KAFKA_REPLICATION_EXPORTER_SASL_PASSWORD=") {
		t.Error("the env file example does not show KAFKA_REPLICATION_EXPORTER_SASL_PASSWORD")
	}
}

func TestPrometheusConfig(t *testing.T) {
	const path = "prometheus/prometheus.yml"
	cfg := decodeAll(t, path)[0]
	jobs, _ := cfg["scrape_configs"].([]any)
	if len(jobs) == 0 {
		t.Fatal("no scrape_configs")
	}
	static, relabelled := false, false
	for _, j := range jobs {
		if get(j, "static_configs", 0, "labels", "cluster") != nil {
			static = true
		}
		rules, _ := get(j, "relabel_configs").([]any)
		for _, r := range rules {
			label, _ := get(r, "target_label").(string)
			relabelled = relabelled || label == "cluster"
			// A per-broker target label keeps each sidecar's series apart in
			// the rules that merge a cluster's sidecars without (instance).
			if label != "" && label != "cluster" && label != "namespace" && !strings.HasPrefix(label, "__") {
				t.Errorf("job %v sets target label %q: the shipped rules merge sidecars without (instance) only, so a per-broker label breaks them", get(j, "job_name"), label)
			}
		}
	}
	if !static {
		t.Error("no static_configs target with a cluster label")
	}
	if !relabelled {
		t.Error("no service-discovery job relabelling into cluster")
	}
	for _, rf := range cfg["rule_files"].([]any) {
		if _, err := os.Stat(filepath.Join(filepath.Dir(path), rf.(string))); err != nil {
			t.Errorf("rule_files: %v", err)
		}
	}
	if get(cfg, "alerting", "alertmanagers") == nil {
		t.Error("no alerting.alertmanagers")
	}

	promtool := filepath.Join(toolCache(), "bin", "promtool")
	if _, err := os.Stat(promtool); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("promtool not installed (run .ci/install-prometheus-tools.sh): %v", err)
		}
		t.Skipf("promtool not in %s; run .ci/install-prometheus-tools.sh", filepath.Dir(promtool))
	}
	// --syntax-only: the file names hosts that do not resolve here and a
	// kubernetes_sd job that needs no cluster to be valid.
	if out, err := exec.Command(promtool, "check", "config", "--syntax-only", path).CombinedOutput(); err != nil {
		t.Errorf("promtool check config: %v\n%s", err, out)
	}
}

func toolCache() string {
	if c := os.Getenv("KRE_CACHE"); c != "" {
		return c
	}
	home, _ := os.UserHomeDir()
	return filepath.Join(home, ".cache", "kafka_replication_exporter")
}

// TestKubernetesManagedKafka checks the admin-only deployment: one exporter
// per cluster, no log files, every partition, credentials from a Secret.
func TestKubernetesManagedKafka(t *testing.T) {
	const path = "kubernetes/managed-kafka.yaml"
	docs := decodeAll(t, path)
	var deploy, service map[string]any
	for _, d := range docs {
		switch d["kind"] {
		case "Deployment":
			deploy = d
		case "Service":
			service = d
		case "Pod", "StatefulSet", "DaemonSet":
			t.Errorf("%s: a %v; the managed deployment is one Deployment", path, d["kind"])
		}
	}
	if deploy == nil || service == nil {
		t.Fatalf("%s: want a Deployment and a Service", path)
	}
	if r := get(deploy, "spec", "replicas"); r != 1 {
		t.Errorf("replicas %v, want 1: two exporters of one cluster export every partition twice", r)
	}
	if s := get(deploy, "spec", "strategy", "type"); s != "Recreate" {
		t.Errorf("strategy %v, want Recreate: a rolling update runs two exporters at once", s)
	}
	containers, _ := get(deploy, "spec", "template", "spec", "containers").([]any)
	if len(containers) != 1 {
		t.Fatalf("%d containers, want the exporter alone (no broker, no sidecar)", len(containers))
	}
	c := containers[0].(map[any]any)
	var args []string
	for _, a := range c["args"].([]any) {
		args = append(args, a.(string))
	}
	checkArgs(t, path, args)
	joined := strings.Join(args, " ")
	for _, bad := range []string{"--log.file", "--log.position-file", "--kafka.broker-id", "--kafka.partition-log-level"} {
		if strings.Contains(joined, bad) {
			t.Errorf("%s in an admin-only deployment", bad)
		}
	}
	if !strings.Contains(joined, "--scope=cluster") {
		t.Error("no --scope=cluster: the default leader scope needs a sidecar per broker")
	}
	if !strings.Contains(joined, "--kafka.server=") {
		t.Error("no --kafka.server")
	}

	// Secrets: a Secret volume, mounted read-only, that the secret flags point into.
	var secretVolume string
	for _, v := range get(deploy, "spec", "template", "spec", "volumes").([]any) {
		if get(v, "secret", "secretName") != nil {
			secretVolume = get(v, "name").(string)
		}
	}
	if secretVolume == "" {
		t.Fatal("no volume from a Secret")
	}
	var secretDir string
	for _, m := range c["volumeMounts"].([]any) {
		if get(m, "name") == secretVolume {
			secretDir = get(m, "mountPath").(string)
			if get(m, "readOnly") != true {
				t.Error("the Secret is not mounted readOnly")
			}
		}
	}
	if secretDir == "" {
		t.Fatal("the Secret volume is not mounted in the exporter")
	}
	secretFlags := 0
	for _, a := range args {
		name, value, _ := strings.Cut(a, "=")
		if strings.HasSuffix(name, "-file") && strings.Contains(name, "sasl") {
			secretFlags++
			if !strings.HasPrefix(value, secretDir+"/") {
				t.Errorf("%s: not in the Secret's mount %s", a, secretDir)
			}
		}
	}
	if secretFlags == 0 {
		t.Error("no SASL secret file flag")
	}

	if get(c, "securityContext", "readOnlyRootFilesystem") != true || get(c, "securityContext", "runAsNonRoot") != true {
		t.Error("want readOnlyRootFilesystem and runAsNonRoot")
	}
	if p := get(c, "livenessProbe", "httpGet", "path"); p != "/-/healthy" {
		t.Errorf("liveness probe path %v, want /-/healthy", p)
	}
	if p := get(c, "readinessProbe", "httpGet", "path"); p != "/-/ready" {
		t.Errorf("readiness probe path %v, want /-/ready", p)
	}
	if p := get(c, "ports", 0, "containerPort"); p != 9742 {
		t.Errorf("container port %v, want 9742", p)
	}

	// The Service selects the Deployment's pods.
	podLabels, _ := get(deploy, "spec", "template", "metadata", "labels").(map[any]any)
	selector, _ := get(service, "spec", "selector").(map[any]any)
	if len(selector) == 0 {
		t.Fatal("the Service has no selector")
	}
	for k, v := range selector {
		if podLabels[k] != v {
			t.Errorf("Service selector %v=%v does not match the pod labels %v", k, v, podLabels)
		}
	}
	if p := get(service, "spec", "ports", 0, "port"); p != 9742 {
		t.Errorf("Service port %v, want 9742", p)
	}
}

// The many-clusters deployment: one Deployment whose exporter reads its
// clusters from a ConfigMap, their secrets from a Secret, and a
// ScrapeConfig that asks /probe for exactly the clusters of the file.
func TestKubernetesManagedKafkaProbe(t *testing.T) {
	const path = "kubernetes/managed-kafka-probe.yaml"
	byKind := map[string]map[string]any{}
	for _, d := range decodeAll(t, path) {
		k, _ := d["kind"].(string)
		if byKind[k] != nil {
			t.Errorf("%s: two of kind %s", path, k)
		}
		byKind[k] = d
	}
	deploy, cm, svc, sc := byKind["Deployment"], byKind["ConfigMap"], byKind["Service"], byKind["ScrapeConfig"]
	if deploy == nil || cm == nil || svc == nil || sc == nil {
		t.Fatalf("%s: want a Deployment, a ConfigMap, a Service and a ScrapeConfig, got %v", path, byKind)
	}
	if r := get(deploy, "spec", "replicas"); r != 1 {
		t.Errorf("replicas %v, want 1", r)
	}
	if s := get(deploy, "spec", "strategy", "type"); s != "Recreate" {
		t.Errorf("strategy %v, want Recreate", s)
	}
	c := get(deploy, "spec", "template", "spec", "containers", 0).(map[any]any)
	var args []string
	for _, a := range c["args"].([]any) {
		args = append(args, a.(string))
	}
	checkArgs(t, path, args)
	joined := strings.Join(args, " ")
	for _, bad := range []string{"--log.file", "--kafka.server", "--kafka.sasl", "--kafka.tls"} {
		if strings.Contains(joined, bad) {
			t.Errorf("%s: the clusters and their credentials belong in the probe file", bad)
		}
	}
	mounts := map[string]string{} // volume name → mount path
	for _, m := range c["volumeMounts"].([]any) {
		mounts[get(m, "name").(string)] = get(m, "mountPath").(string)
		if get(m, "readOnly") != true {
			t.Errorf("volume %v not mounted readOnly", get(m, "name"))
		}
	}
	var cmDir, secretDir string
	for _, v := range get(deploy, "spec", "template", "spec", "volumes").([]any) {
		switch {
		case get(v, "configMap", "name") == get(cm, "metadata", "name"):
			cmDir = mounts[get(v, "name").(string)]
		case get(v, "secret", "secretName") != nil:
			secretDir = mounts[get(v, "name").(string)]
		}
	}
	if cmDir == "" || secretDir == "" {
		t.Fatalf("want the ConfigMap and a Secret mounted, got %v", mounts)
	}
	if !slices.Contains(args, "--probe.config-file="+cmDir+"/probe.yml") {
		t.Errorf("want --probe.config-file=%s/probe.yml, got %v", cmDir, args)
	}

	raw, _ := get(cm, "data", "probe.yml").(string)
	var file struct {
		Targets map[string]any `yaml:"targets"`
	}
	if err := yaml.Unmarshal([]byte(raw), &file); err != nil || len(file.Targets) == 0 {
		t.Fatalf("the ConfigMap's probe.yml: %v, %d targets", err, len(file.Targets))
	}
	for _, line := range strings.Split(raw, "\n") {
		if k, v, ok := strings.Cut(strings.TrimSpace(line), ":"); ok && strings.HasSuffix(k, "_file") && !strings.HasPrefix(strings.TrimSpace(v), secretDir+"/") {
			t.Errorf("probe.yml: %s not in the Secret's mount %s", strings.TrimSpace(line), secretDir)
		}
	}

	if p := get(sc, "spec", "metricsPath"); p != "/probe" {
		t.Errorf("ScrapeConfig metricsPath %v, want /probe", p)
	}
	var targets []string
	for _, tg := range get(sc, "spec", "staticConfigs", 0, "targets").([]any) {
		targets = append(targets, tg.(string))
	}
	var names []string
	for n := range file.Targets {
		names = append(names, n)
	}
	slices.Sort(targets)
	slices.Sort(names)
	if !slices.Equal(targets, names) {
		t.Errorf("ScrapeConfig targets %v, want the clusters of probe.yml %v", targets, names)
	}
	relabel := map[string]string{} // target label → source label or replacement
	for _, r := range get(sc, "spec", "relabelings").([]any) {
		src, _ := get(r, "sourceLabels", 0).(string)
		if rep, ok := get(r, "replacement").(string); ok {
			src = rep
		}
		relabel[get(r, "targetLabel").(string)] = src
	}
	svcAddr := fmt.Sprintf("%s.%s.svc:%v", get(svc, "metadata", "name"), get(svc, "metadata", "namespace"), get(svc, "spec", "ports", 0, "port"))
	for label, want := range map[string]string{"__param_target": "__address__", "instance": "__param_target", "__address__": svcAddr} {
		if relabel[label] != want {
			t.Errorf("ScrapeConfig relabeling of %s: %q, want %q", label, relabel[label], want)
		}
	}
}
