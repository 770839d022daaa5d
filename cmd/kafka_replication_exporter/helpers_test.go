package main

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"
)

// The binary the process-level tests run, built once per test run.
var (
	buildOnce sync.Once
	builtBin  string
	buildErr  error
)

// TestMain removes the built binary after the tests.
func TestMain(m *testing.M) {
	code := m.Run()
	if builtBin != "" {
		os.RemoveAll(filepath.Dir(builtBin))
	}
	os.Exit(code)
}

// exporterBinary builds the exporter (once) and returns its path.
func exporterBinary(t testing.TB) string {
	t.Helper()
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "kre-cmd-bin-*")
		if err != nil {
			buildErr = err
			return
		}
		builtBin = filepath.Join(dir, programName)
		if out, err := exec.Command("go", "build", "-o", builtBin, ".").CombinedOutput(); err != nil {
			buildErr = fmt.Errorf("%w\n%s", err, out)
		}
	})
	if buildErr != nil {
		t.Fatalf("building the exporter: %v", buildErr)
	}
	return builtBin
}

// writeFile writes a test's input file, failing the test if it cannot.
func writeFile(t testing.TB, path string, data []byte, perm os.FileMode) {
	t.Helper()
	if err := os.WriteFile(path, data, perm); err != nil {
		t.Fatal(err)
	}
}

// setMtime sets a test file's modification (and access) time.
func setMtime(t testing.TB, path string, mtime time.Time) {
	t.Helper()
	if err := os.Chtimes(path, mtime, mtime); err != nil {
		t.Fatal(err)
	}
}

// gzipped returns data compressed as a rotated .gz log file holds it.
func gzipped(t testing.TB, data []byte) []byte {
	t.Helper()
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	if _, err := zw.Write(data); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return gz.Bytes()
}
