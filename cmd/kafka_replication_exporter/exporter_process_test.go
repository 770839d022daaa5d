package main

import (
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// exporterProcess is the exporter binary running serve, as a service manager
// runs it: on port 0, its bound address read from --web.listen-address-file,
// so no port is chosen by the test and taken by another process in between.
type exporterProcess struct {
	t        *testing.T
	cmd      *exec.Cmd
	addr     string // host:port the exporter bound
	addrFile string
	stderr   lockedBuffer
	done     chan struct{} // closed when the process has exited
	err      error         // its exit, once done is closed
}

// startExporter starts `serve` with args (plus the listen address flags and
// --web.disable-exporter-metrics), waits until it has bound its listener, and
// kills and reaps it at the end of the test if it still runs.
func startExporter(t *testing.T, args ...string) *exporterProcess {
	t.Helper()
	p := &exporterProcess{t: t, addrFile: filepath.Join(t.TempDir(), "exporter.addr"), done: make(chan struct{})}
	listen := []string{"serve", "--web.listen-address=127.0.0.1:0", "--web.listen-address-file=" + p.addrFile, "--web.disable-exporter-metrics"}
	args = append(listen, args...)
	p.cmd = exec.Command(exporterBinary(t), args...)
	p.cmd.Stderr = &p.stderr
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { p.err = p.cmd.Wait(); close(p.done) }()
	t.Cleanup(func() {
		select {
		case <-p.done:
		default:
			_ = p.cmd.Process.Kill()
			<-p.done
			t.Logf("the exporter was still running at the end of the test: killed (%v)", p.err)
		}
	})
	deadline := time.Now().Add(20 * time.Second)
	for p.addr == "" {
		select {
		case <-p.done:
			t.Fatalf("the exporter exited (%v) before writing %s:\n%s", p.err, p.addrFile, p.stderr.String())
		default:
		}
		if b, err := os.ReadFile(p.addrFile); err == nil {
			if p.addr = strings.TrimSpace(string(b)); p.addr == "" {
				t.Fatal("the address file exists but is empty: it was not written atomically")
			}
		} else if time.Now().After(deadline) {
			t.Fatalf("no %s within 20s:\n%s", p.addrFile, p.stderr.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	return p
}

// get returns the status and body of path, 0 and "" while nothing answers.
func (p *exporterProcess) get(path string) (int, string) {
	resp, err := http.Get("http://" + p.addr + path)
	if err != nil {
		return 0, ""
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body)
}

// metrics returns the exporter's scrape, "" while it does not answer.
func (p *exporterProcess) metrics() string {
	_, body := p.get("/metrics")
	return body
}

// signal sends sig and returns how the process exited, failing the test if
// it has not exited within d.
func (p *exporterProcess) signal(sig os.Signal, d time.Duration) error {
	p.t.Helper()
	if err := p.cmd.Process.Signal(sig); err != nil {
		p.t.Fatal(err)
	}
	select {
	case <-p.done:
		return p.err
	case <-time.After(d):
		p.t.Fatalf("no exit within %v of %v\n%s", d, sig, p.stderr.String())
		return nil
	}
}

// stop sends SIGTERM and waits for exit 0: the positions are saved.
func (p *exporterProcess) stop() {
	p.t.Helper()
	if err := p.signal(syscall.SIGTERM, 15*time.Second); err != nil {
		p.t.Fatalf("want exit 0 after SIGTERM, got %v\n%s", err, p.stderr.String())
	}
}

// throttle lets the process run for share of every 100ms and stops it
// (SIGSTOP) for the rest, as a CPU limit's CFS quota does to a sidecar, so a
// test can watch a catch-up that a fast machine would finish in a second. The
// returned func resumes it at full speed.
func (p *exporterProcess) throttle(share float64) (resume func()) {
	const period = 100 * time.Millisecond
	run := time.Duration(share * float64(period))
	quit, stopped := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(stopped)
		for {
			select {
			case <-quit:
				return
			case <-p.done:
				return
			case <-time.After(run):
			}
			_ = p.cmd.Process.Signal(syscall.SIGSTOP)
			time.Sleep(period - run)
			_ = p.cmd.Process.Signal(syscall.SIGCONT)
		}
	}()
	return func() { close(quit); <-stopped }
}

// kill ends the process with SIGKILL, as the OOM killer or `kill -9` would.
func (p *exporterProcess) kill() {
	p.t.Helper()
	if err := p.cmd.Process.Kill(); err != nil {
		p.t.Fatal(err)
	}
	<-p.done // "signal: killed", as wanted
}

// lockedBuffer collects the process's stderr, which the test reads while
// exec's copying goroutine may still write it.
type lockedBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}
