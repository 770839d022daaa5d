//go:build unix

package main

import (
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A harness (or a supervisor) starts the exporter on port 0 and learns the
// port the kernel gave it from --web.listen-address-file: no port is chosen
// by one process and bound by another, so nothing can take it in between.
// The file appears complete (renamed into place) only once the listener is
// bound, and is removed at a clean stop.
func TestListenAddressFileNamesTheBoundPort(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	dir := t.TempDir()
	p := startExporter(t, "--log.file="+filepath.Join(dir, "server.log"))
	addr, addrFile := p.addr, p.addrFile
	if !strings.HasPrefix(addr, "127.0.0.1:") || strings.HasSuffix(addr, ":0") || strings.Contains(addr, "\n") {
		t.Fatalf("address file holds %q, want the one bound 127.0.0.1:port", addr)
	}
	if code, body := p.get("/metrics"); code != http.StatusOK || !strings.Contains(body, "kafka_replication_") {
		t.Fatalf("GET http://%s/metrics: %d\n%.300s", addr, code, body)
	}
	if tmp, _ := filepath.Glob(filepath.Join(filepath.Dir(addrFile), ".exporter.addr*")); len(tmp) > 0 {
		t.Errorf("temporary files left beside the address file: %v", tmp)
	}

	p.stop()
	if _, err := os.Stat(addrFile); !os.IsNotExist(err) {
		t.Errorf("after a clean stop the address file is still there (stat: %v): a reader would take a dead address", err)
	}
}

// The file names a listener the exporter holds, so it supports TCP addresses
// only: with socket activation or vsock the flag is refused up front.
func TestListenAddressFileRefusesOtherListeners(t *testing.T) {
	dir := t.TempDir()
	for _, args := range [][]string{
		{"--web.systemd-socket"},
		{"--web.listen-address=vsock://:9742"},
	} {
		base := []string{"serve", "--log.file=" + filepath.Join(dir, "server.log"), "--web.listen-address-file=" + filepath.Join(dir, "addr")}
		code, _, errOut := runCLI(t, "", append(base, args...)...)
		if code != exitUsage || !strings.Contains(errOut, "--web.listen-address-file") {
			t.Errorf("%v: exit %d, want 2 naming --web.listen-address-file:\n%s", args, code, errOut)
		}
	}
}
