//go:build unix

package main

import (
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
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
	addrFile := filepath.Join(dir, "exporter.addr")
	cmd := exec.Command(exporterBinary(t), "serve", "--log.file="+filepath.Join(dir, "server.log"),
		"--web.listen-address=127.0.0.1:0", "--web.listen-address-file="+addrFile, "--web.disable-exporter-metrics")
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() {
		_ = cmd.Process.Kill() // fails once the process has exited
		if err := <-exited; err != nil {
			t.Logf("the exporter ended with %v", err)
		}
	})

	var addr string
	deadline := time.Now().Add(20 * time.Second)
	for addr == "" {
		select {
		case err := <-exited:
			exited <- err
			t.Fatalf("the exporter exited (%v) before writing %s:\n%s", err, addrFile, stderr.String())
		default:
		}
		if b, err := os.ReadFile(addrFile); err == nil {
			addr = strings.TrimSpace(string(b))
			if addr == "" {
				t.Fatal("the address file exists but is empty: it was not written atomically")
			}
		} else if time.Now().After(deadline) {
			t.Fatalf("no %s within 20s:\n%s", addrFile, stderr.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	if !strings.HasPrefix(addr, "127.0.0.1:") || strings.HasSuffix(addr, ":0") || strings.Contains(addr, "\n") {
		t.Fatalf("address file holds %q, want the one bound 127.0.0.1:port", addr)
	}
	resp, err := http.Get("http://" + addr + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), "kafka_replication_") {
		t.Fatalf("GET http://%s/metrics: %s\n%.300s", addr, resp.Status, body)
	}
	if tmp, _ := filepath.Glob(filepath.Join(dir, ".exporter.addr*")); len(tmp) > 0 {
		t.Errorf("temporary files left beside the address file: %v", tmp)
	}

	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-exited:
		exited <- err
		if err != nil {
			t.Fatalf("exit after SIGTERM: %v\n%s", err, stderr.String())
		}
	case <-time.After(20 * time.Second):
		t.Fatal("no exit within 20s of SIGTERM")
	}
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
