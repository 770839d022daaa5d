package deploy

import (
	"encoding/json"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"
)

// instruction is one Dockerfile instruction, continuation lines joined.
type instruction struct {
	cmd  string // upper case: FROM, RUN, ...
	args string
}

// parseDockerfile splits a Dockerfile into stages of instructions. It knows
// just enough of the syntax for the checks below: comments, line
// continuations, one instruction per logical line.
func parseDockerfile(t *testing.T, path string) [][]instruction {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var stages [][]instruction
	var logical string
	for _, line := range strings.Split(string(raw), "\n") {
		trimmed := strings.TrimSpace(line)
		if strings.HasPrefix(trimmed, "#") || (trimmed == "" && logical == "") {
			continue
		}
		if strings.HasSuffix(trimmed, "\\") {
			logical += strings.TrimSuffix(trimmed, "\\") + " "
			continue
		}
		logical += trimmed
		cmd, args, _ := strings.Cut(strings.TrimSpace(logical), " ")
		logical = ""
		if cmd == "" {
			continue
		}
		in := instruction{strings.ToUpper(cmd), strings.TrimSpace(args)}
		if in.cmd == "FROM" || len(stages) == 0 {
			stages = append(stages, nil)
		}
		stages[len(stages)-1] = append(stages[len(stages)-1], in)
	}
	return stages
}

func find(stage []instruction, cmd string) []instruction {
	var out []instruction
	for _, in := range stage {
		if in.cmd == cmd {
			out = append(out, in)
		}
	}
	return out
}

// versionVars are the variables of github.com/prometheus/common/version that
// --version and kafka_replication_exporter_build_info report.
var versionVars = []string{"Version", "Revision", "Branch", "BuildUser", "BuildDate"}

func TestDockerfile(t *testing.T) {
	stages := parseDockerfile(t, "../Dockerfile")
	// stages[0] holds the global ARGs before the first FROM.
	var builder, runtime []instruction
	for _, s := range stages {
		if s[0].cmd != "FROM" {
			continue
		}
		if builder == nil {
			builder = s
		}
		runtime = s
	}
	if builder == nil || &builder[0] == &runtime[0] {
		t.Fatal("want a multi-stage build: a builder stage and a runtime stage")
	}
	if from := builder[0].args; !regexp.MustCompile(`^golang:\S+ AS \w+$`).MatchString(from) {
		t.Errorf("builder: FROM %s, want golang:<version> AS <name>", from)
	}
	if from := runtime[0].args; !strings.HasPrefix(from, "gcr.io/distroless/static") && !strings.HasPrefix(from, "busybox") {
		t.Errorf("runtime: FROM %s, want a minimal image (distroless/static or busybox)", from)
	}

	t.Run("static build with version ldflags", func(t *testing.T) {
		var build string
		for _, in := range find(builder, "RUN") {
			if strings.Contains(in.args, "go build") {
				build = in.args
			}
		}
		if build == "" {
			t.Fatal("no RUN go build in the builder stage")
		}
		for _, want := range []string{"CGO_ENABLED=0", "-trimpath", "./cmd/kafka_replication_exporter"} {
			if !strings.Contains(build, want) {
				t.Errorf("go build lacks %s: %s", want, build)
			}
		}
		for _, v := range versionVars {
			if !strings.Contains(build, "-X github.com/prometheus/common/version."+v+"=") {
				t.Errorf("go build does not inject version.%s", v)
			}
		}
	})

	t.Run("non-root", func(t *testing.T) {
		users := find(runtime, "USER")
		if len(users) == 0 {
			t.Fatal("runtime stage has no USER: it would run as root")
		}
		user := users[len(users)-1].args
		uid, _, _ := strings.Cut(user, ":")
		if uid == "0" || uid == "root" || uid == "" {
			t.Errorf("USER %s runs as root", user)
		}
	})

	t.Run("port", func(t *testing.T) {
		_, help := serveFlags(t)
		m := regexp.MustCompile(`--web\.listen-address=:(\d+)`).FindStringSubmatch(help)
		if m == nil {
			t.Fatal("no default --web.listen-address in serve --help")
		}
		exposes := find(runtime, "EXPOSE")
		if len(exposes) != 1 || exposes[0].args != m[1] {
			t.Errorf("EXPOSE %v, want the default listen port %s", exposes, m[1])
		}
	})

	t.Run("exec-form entrypoint and command", func(t *testing.T) {
		var entry, cmd []string
		for _, in := range find(runtime, "ENTRYPOINT") {
			if err := json.Unmarshal([]byte(in.args), &entry); err != nil {
				t.Errorf("ENTRYPOINT %s is not exec form (a JSON array): %v", in.args, err)
			}
		}
		if len(entry) != 1 {
			t.Fatalf("ENTRYPOINT %q, want exactly the binary", entry)
		}
		copied := false
		for _, in := range find(runtime, "COPY") {
			copied = copied || strings.HasSuffix(in.args, " "+entry[0])
		}
		if !copied {
			t.Errorf("ENTRYPOINT %s is not the path the binary is copied to", entry[0])
		}
		for _, in := range find(runtime, "CMD") {
			if err := json.Unmarshal([]byte(in.args), &cmd); err != nil {
				t.Errorf("CMD %s is not exec form: %v", in.args, err)
			}
		}
		checkArgs(t, "Dockerfile CMD", cmd)
	})

	t.Run("OCI labels", func(t *testing.T) {
		var labels string
		for _, in := range find(runtime, "LABEL") {
			labels += " " + in.args
		}
		for _, key := range []string{"title", "description", "source", "version", "revision", "created"} {
			if !strings.Contains(labels, "org.opencontainers.image."+key+"=") {
				t.Errorf("no org.opencontainers.image.%s label", key)
			}
		}
	})

	t.Run("copies every package the binary is built from", func(t *testing.T) {
		var copied []string
		for _, in := range find(builder, "COPY") {
			if f := strings.Fields(in.args); len(f) == 2 && f[0] == f[1] && strings.HasSuffix(f[0], "/") {
				copied = append(copied, f[0])
			}
		}
		out, err := exec.Command("go", "list", "-deps", "-f", "{{if .Module}}{{if .Module.Main}}{{.Dir}}{{end}}{{end}}",
			"../cmd/kafka_replication_exporter").Output()
		if err != nil {
			t.Fatal(err)
		}
		root, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}").Output()
		if err != nil {
			t.Fatal(err)
		}
		for _, dir := range strings.Fields(string(out)) {
			rel := strings.TrimPrefix(dir, strings.TrimSpace(string(root))+"/") + "/"
			ok := false
			for _, c := range copied {
				ok = ok || strings.HasPrefix(rel, c)
			}
			if !ok {
				t.Errorf("package %s is not copied into the builder stage (have %v)", rel, copied)
			}
		}
	})
}

// TestMakefileBuildMatchesDockerfile: `make build` is the CI stand-in for the
// image (no Docker engine there), so it must build the same way.
func TestMakefileBuildMatchesDockerfile(t *testing.T) {
	raw, err := os.ReadFile("../Makefile")
	if err != nil {
		t.Fatal(err)
	}
	mk := string(raw)
	build := regexp.MustCompile(`(?m)^build:.*\n((?:\t.*\n)+)`).FindStringSubmatch(mk)
	if build == nil {
		t.Fatal("no build target in the Makefile")
	}
	for _, want := range []string{"CGO_ENABLED=0", "-trimpath", "$(LDFLAGS)"} {
		if !strings.Contains(build[1], want) {
			t.Errorf("make build lacks %s:\n%s", want, build[1])
		}
	}
	for _, v := range versionVars {
		if !strings.Contains(mk, "-X github.com/prometheus/common/version."+v+"=") {
			t.Errorf("Makefile LDFLAGS do not inject version.%s", v)
		}
	}
}

// TestBinaryIsStatic checks the binary built like `make build` (TestMain):
// CGO off, paths trimmed, the version injected.
func TestBinaryIsStatic(t *testing.T) {
	out, err := exec.Command("go", "version", "-m", exporterBin).Output()
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"build\tCGO_ENABLED=0", "build\t-trimpath=true"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("go version -m lacks %q:\n%s", want, out)
		}
	}
	ver, err := exec.Command(exporterBin, "--version").CombinedOutput()
	if err != nil {
		t.Fatalf("--version: %v\n%s", err, ver)
	}
	if !strings.Contains(string(ver), testVersion) {
		t.Errorf("--version does not show the injected version %s:\n%s", testVersion, ver)
	}
}
