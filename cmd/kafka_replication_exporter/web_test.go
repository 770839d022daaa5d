package main

import (
	"crypto/tls"
	"errors"
	"io"
	"log"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/exporter-toolkit/web"
	"golang.org/x/crypto/bcrypt"

	"github.com/kafka-replication-exporter/kafka_replication_exporter/internal/testcert"
)

func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// serveHTTP serves the sidecar's handler on addr through exporter-toolkit,
// with the server serve builds, and waits for the listener.
func serveHTTP(t *testing.T, sc *sidecar, s *serveCommand, addr string) {
	t.Helper()
	srv := s.httpServer(sc.handler(s))
	srv.ErrorLog = log.New(io.Discard, "", 0) // the readiness probe below is no TLS client
	go func() {
		if err := web.ListenAndServe(srv, s.web, slog.New(slog.DiscardHandler)); !errors.Is(err, http.ErrServerClosed) {
			t.Error(err)
		}
	}()
	t.Cleanup(func() { srv.Close() })
	waitFor(t, "the listener", 10*time.Second, func() bool {
		c, err := net.Dial("tcp", addr)
		if err == nil {
			c.Close()
		}
		return err == nil
	})
}

// --web.config.file gives TLS and basic auth through exporter-toolkit, as in
// every Prometheus exporter: 401 without credentials, 200 with them.
func TestWebConfigTLSAndBasicAuth(t *testing.T) {
	dir := t.TempDir()
	cert, key := testcert.New(t).WriteFiles(t, dir)
	hash, _ := bcrypt.GenerateFromPassword([]byte("s3cret"), bcrypt.MinCost)
	cfg := filepath.Join(dir, "web.yml")
	writeFile(t, cfg, []byte("tls_server_config:\n  cert_file: "+cert+"\n  key_file: "+key+"\nbasic_auth_users:\n  prom: "+string(hash)+"\n"), 0o600)
	addr := "127.0.0.1:" + strconv.Itoa(freePort(t))

	sc, s := startSidecar(t, "--log.file="+filepath.Join(dir, "server.log"), "--web.listen-address="+addr, "--web.config.file="+cfg)
	serveHTTP(t, sc, s, addr)

	client := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}, Timeout: 5 * time.Second}
	get := func(user, pass string) int {
		req, _ := http.NewRequest("GET", "https://"+addr+"/metrics", nil)
		if user != "" {
			req.SetBasicAuth(user, pass)
		}
		resp, err := client.Do(req)
		if err != nil {
			return -1
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	waitFor(t, "the TLS listener", 10*time.Second, func() bool { return get("", "") != -1 })
	if got := get("", ""); got != http.StatusUnauthorized {
		t.Errorf("want 401 without credentials, got %d", got)
	}
	if got := get("prom", "wrong"); got != http.StatusUnauthorized {
		t.Errorf("want 401 with a wrong password, got %d", got)
	}
	if got := get("prom", "s3cret"); got != http.StatusOK {
		t.Errorf("want 200 with credentials, got %d", got)
	}
}

// A --web.config.file that is missing or wrong is a configuration error like
// any other: exit 2 with one line, before anything is served.
func TestBadWebConfigExitsTwo(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) string {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		return path
	}
	for name, tc := range map[string]struct{ file, want string }{
		"missing":        {filepath.Join(dir, "absent.yml"), "no such file"},
		"not YAML":       {write("garbage.yml", "\x00\x01: [unclosed\n"), "yaml"},
		"unknown field":  {write("typo.yml", "basic_auth_user:\n  prom: x\n"), "basic_auth_user"},
		"bad hash":       {write("hash.yml", "basic_auth_users:\n  prom: not-a-bcrypt-hash\n"), "bcrypt"},
		"cert not found": {write("tls.yml", "tls_server_config:\n  cert_file: "+filepath.Join(dir, "no.pem")+"\n  key_file: "+filepath.Join(dir, "no.key")+"\n"), "no.pem"},
	} {
		code, _, errOut := runCLI(t, "", "serve", "--log.file="+filepath.Join(dir, "server.log"),
			"--web.listen-address=127.0.0.1:0", "--web.config.file="+tc.file)
		if code != exitUsage {
			t.Errorf("%s: want exit 2, got %d (stderr %q)", name, code, errOut)
		}
		if n := strings.Count(strings.TrimSpace(errOut), "\n"); n != 0 || !strings.Contains(errOut, "--web.config.file") || !strings.Contains(errOut, tc.want) {
			t.Errorf("%s: want one line naming --web.config.file and %q, got %q", name, tc.want, errOut)
		}
	}
}

// An idle keep-alive connection is closed after the idle timeout instead of
// holding a file descriptor for as long as the client likes.
func TestIdleConnectionsAreReaped(t *testing.T) {
	addr := "127.0.0.1:" + strconv.Itoa(freePort(t))
	sc, s := startSidecar(t, "--log.file="+filepath.Join(t.TempDir(), "server.log"), "--web.listen-address="+addr)
	s.idleTimeout = 500 * time.Millisecond
	serveHTTP(t, sc, s, addr)

	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	io.WriteString(conn, "GET /-/healthy HTTP/1.1\r\nHost: "+addr+"\r\n\r\n")
	start := time.Now()
	if err := conn.SetReadDeadline(start.Add(10 * time.Second)); err != nil {
		t.Fatal(err)
	}
	_, err = io.ReadAll(conn) // the answer, then EOF when the server closes
	if err != nil {
		t.Fatalf("want the server to close the idle connection, got %v", err)
	}
	if took := time.Since(start); took > 3*time.Second {
		t.Errorf("the idle connection was closed after %s, want about %s", took, s.idleTimeout)
	}
}
