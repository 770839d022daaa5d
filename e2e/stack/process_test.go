package stack

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kafka-replication-exporter/kafka_replication_exporter/e2e/harness"
)

// TestMain lets the test binary stand in for a server the stack starts (see
// fakeServer).
func TestMain(m *testing.M) {
	if os.Getenv("KRE_FAKE_SERVER") == "1" {
		fakeServer(os.Args[1:])
		return
	}
	os.Exit(m.Run())
}

// fakeServer binds --web.listen-address as Prometheus, Alertmanager and the
// exporter do, failing with Go's "bind: address already in use" when the
// port is taken, writes --web.listen-address-file when given, and answers
// /-/ready. KRE_FAKE_EXIT=1 makes it exit at once, as an exporter with a bad
// flag does.
func fakeServer(args []string) {
	if os.Getenv("KRE_FAKE_EXIT") == "1" {
		fmt.Println("fake: error: unknown long flag '--bad'")
		os.Exit(2)
	}
	var addr, addrFile string
	for _, a := range args {
		if v, ok := strings.CutPrefix(a, "--web.listen-address="); ok {
			addr = v
		}
		if v, ok := strings.CutPrefix(a, "--web.listen-address-file="); ok {
			addrFile = v
		}
	}
	l, err := net.Listen("tcp", addr)
	if err != nil {
		fmt.Printf("level=ERROR msg=\"Web server stopped\" err=%q\n", err.Error())
		os.Exit(1)
	}
	if addrFile != "" {
		if err := os.WriteFile(addrFile, []byte(l.Addr().String()+"\n"), 0o644); err != nil {
			os.Exit(1)
		}
	}
	http.HandleFunc("/-/ready", func(w http.ResponseWriter, _ *http.Request) { io.WriteString(w, "fake "+l.Addr().String()) })
	_ = http.Serve(l, nil)
}

func fakeBinary(t *testing.T) string {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("KRE_FAKE_SERVER", "1")
	return exe
}

// captureLog replaces logf for the test and returns what it logged.
func captureLog(t *testing.T) func() string {
	var mu sync.Mutex
	var lines []string
	old := logf
	t.Cleanup(func() { logf = old })
	logf = func(format string, args ...any) {
		mu.Lock()
		defer mu.Unlock()
		lines = append(lines, fmt.Sprintf(format, args...))
	}
	return func() string {
		mu.Lock()
		defer mu.Unlock()
		return strings.Join(lines, "\n")
	}
}

// A port taken between its choice and the server's bind (here: chosen, then
// held by the test) makes the server exit with "address already in use";
// it is started again on another port, and the retry is logged.
func TestStartOnFreeAddrRetriesOnAnotherPort(t *testing.T) {
	bin := fakeBinary(t)
	logged := captureLog(t)
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close() // accepts, never answers: waitReady must not take it for the server
	first := true
	old := chooseAddr
	t.Cleanup(func() { chooseAddr = old })
	chooseAddr = func() (string, error) {
		if first {
			first = false
			return taken.Addr().String(), nil
		}
		return harness.ListenAddr()
	}
	dir := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	start := func(addr string) (*process, error) {
		return startProcess("fake", filepath.Join(dir, "fake.log"), bin, "--web.listen-address="+addr)
	}
	ready := func(p *process, addr string) error { return p.waitReady(ctx, "http://"+addr+"/-/ready") }
	p, addr, err := startOnFreeAddr("", start, ready)
	if err != nil {
		t.Fatal(err)
	}
	defer p.stop()
	if addr == taken.Addr().String() {
		t.Fatalf("started on the taken port %s", addr)
	}
	if got := logged(); !strings.Contains(got, "address already in use") || !strings.Contains(got, "try 2 of 3") {
		t.Errorf("the retry is not logged with the bind failure: %q", got)
	}
	resp, err := http.Get("http://" + addr + "/-/ready")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if string(body) != "fake "+addr {
		t.Errorf("%s answers %q, not the server started", addr, body)
	}

	// A given address is not moved: the caller wants that one.
	if _, _, err := startOnFreeAddr(taken.Addr().String(), start, ready); err == nil || !strings.Contains(err.Error(), "address already in use") {
		t.Errorf("on a given, taken address: %v, want the bind failure", err)
	}
}

// A sidecar's address is the one it reports having bound, never one chosen
// beforehand; one that exits before saying fails at once with its output.
func TestLaunchExporterReadsTheBoundAddress(t *testing.T) {
	bin := fakeBinary(t)
	dir := t.TempDir()
	n := &harness.Node{ID: 1, Dir: dir, LogDir: dir, BrokerAddr: "127.0.0.1:1"}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	e, err := launchExporter(ctx, n, bin, "exporter.log", brokerArgs(n))
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	if !strings.HasPrefix(e.Addr, "127.0.0.1:") || strings.HasSuffix(e.Addr, ":0") || e.URL != "http://"+e.Addr+"/metrics" {
		t.Fatalf("Addr %q, URL %q: want the bound 127.0.0.1:port", e.Addr, e.URL)
	}
	if err := e.proc.waitReady(ctx, "http://"+e.Addr+"/-/ready"); err != nil {
		t.Fatal(err)
	}

	t.Setenv("KRE_FAKE_EXIT", "1")
	start := time.Now()
	_, err = launchExporter(ctx, n, bin, "exporter.log", brokerArgs(n))
	if err == nil || !strings.Contains(err.Error(), "unknown long flag") {
		t.Fatalf("an exporter that exits at once: %v, want its output", err)
	}
	if took := time.Since(start); took > 10*time.Second {
		t.Errorf("the exit was noticed after %v", took)
	}
}
