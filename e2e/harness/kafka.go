package harness

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
)

// Versions the harness knows how to run. The first is the primary one: the
// current release. 4.1.1 is the first line with Eligible Leader Replicas on
// by default; 3.9.1 is the last 3.x line (reload4j, log4j 1.x file rolling).
var Versions = []string{"4.4.0", "4.1.1", "3.9.1"}

// logBackend is the logging library a Kafka version ships.
type logBackend int

const (
	log4j2   logBackend = iota // Kafka 4.x
	reload4j                   // Kafka 3.x (log4j 1.2 API)
)

func backendFor(version string) logBackend {
	if strings.HasPrefix(version, "3.") || strings.HasPrefix(version, "2.") {
		return reload4j
	}
	return log4j2
}

// FetchLibs returns the directory holding the jars of the given Kafka version,
// downloading them through e2e/kafka/fetch.sh (Maven) unless already cached.
func FetchLibs(ctx context.Context, version string) (string, error) {
	return runFetchScript(ctx, "fetch.sh", version, "Kafka "+version, " (set Options.LibsDir to a Kafka libs/ directory instead)")
}

// runFetchScript runs e2e/kafka/<script> for version and returns the
// directory it prints; what names the download in errors, hint follows a
// missing script's error.
func runFetchScript(ctx context.Context, script, version, what, hint string) (string, error) {
	path := filepath.Join(sourceDir(), "..", "kafka", script)
	if _, err := os.Stat(path); err != nil {
		return "", fmt.Errorf("fetch script: %w%s", err, hint)
	}
	var stdout, stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, "sh", path, version)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("fetch %s: %w\n%s", what, err, tail(stderr.String(), 2000))
	}
	dir := strings.TrimSpace(stdout.String())
	if dir == "" {
		return "", fmt.Errorf("fetch %s: script printed no directory", what)
	}
	return dir, nil
}

// sourceDir is the directory of this package's source, used to find the
// fetch script from both tests and programs built inside the repository.
func sourceDir() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Dir(file)
}

func tail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return "…" + s[len(s)-n:]
}
