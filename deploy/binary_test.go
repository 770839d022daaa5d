package deploy

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// exporterBin is the binary built by TestMain the way `make build` builds it
// (CGO_ENABLED=0, -trimpath, the version ldflags), so the tests check the flags
// the program really has and the build the Dockerfile promises.
var exporterBin string

const testVersion = "9.9.9-deploytest"

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "kre-deploy-test")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	exporterBin = filepath.Join(dir, "kafka_replication_exporter")
	cmd := exec.Command("go", "build", "-trimpath", "-o", exporterBin,
		"-ldflags", "-X github.com/prometheus/common/version.Version="+testVersion,
		"../cmd/kafka_replication_exporter")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "building the exporter: %v\n%s", err, out)
		os.RemoveAll(dir)
		os.Exit(2)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// serveFlags returns the names of the flags `serve` accepts (global flags
// included), from the program's own help, and the help text itself.
func serveFlags(t *testing.T) (map[string]bool, string) {
	t.Helper()
	out, err := exec.Command(exporterBin, "serve", "--help").CombinedOutput()
	if err != nil {
		t.Fatalf("serve --help: %v\n%s", err, out)
	}
	flags := map[string]bool{}
	for _, m := range regexp.MustCompile(`(?m)^ {2,6}(?:-\w, )?--(\[no-\])?([\w.-]+)`).FindAllStringSubmatch(string(out), -1) {
		flags[m[2]] = true
		if m[1] != "" {
			flags["no-"+m[2]] = true
		}
	}
	if len(flags) < 10 {
		t.Fatalf("found only %d flags in serve --help:\n%s", len(flags), out)
	}
	return flags, string(out)
}

// checkArgs fails for every --flag in args the program does not have.
func checkArgs(t *testing.T, where string, args []string) {
	t.Helper()
	flags, _ := serveFlags(t)
	for _, a := range args {
		if !strings.HasPrefix(a, "--") {
			continue
		}
		name, _, _ := strings.Cut(strings.TrimPrefix(a, "--"), "=")
		if !flags[name] {
			t.Errorf("%s: %s is not a flag of kafka_replication_exporter serve", where, a)
		}
	}
}
