package stack

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"
)

// process is a child program whose output goes to a log file.
type process struct {
	name    string
	cmd     *exec.Cmd
	logPath string
	exited  chan struct{}
	once    sync.Once
	waitErr error
}

// startProcess starts bin with args; stdout and stderr go to logPath.
func startProcess(name, logPath, bin string, args ...string) (*process, error) {
	out, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, err
	}
	defer out.Close() // the child keeps its own copy
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = out, out
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	p := &process{name: name, cmd: cmd, logPath: logPath, exited: make(chan struct{})}
	go func() {
		p.waitErr = cmd.Wait()
		close(p.exited)
	}()
	return p, nil
}

// stop sends SIGTERM to the process group and SIGKILL if it has not exited
// within 10 s. It is safe to call more than once.
func (p *process) stop() {
	p.once.Do(func() {
		_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGTERM)
		select {
		case <-p.exited:
		case <-time.After(10 * time.Second):
			_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
			<-p.exited
		}
	})
}

// kill sends SIGKILL to the process group and waits for the exit.
func (p *process) kill() {
	p.once.Do(func() {
		_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
		<-p.exited
	})
}

// logTail returns the end of the process's output, for error messages.
func (p *process) logTail() string {
	b, err := os.ReadFile(p.logPath)
	if err != nil {
		return err.Error()
	}
	s := string(b)
	if len(s) > 3000 {
		s = "…" + s[len(s)-3000:]
	}
	return s
}

// waitReady polls url until it answers 200, the process exits or ctx ends.
func (p *process) waitReady(ctx context.Context, url string) error {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	ticker := time.NewTicker(200 * time.Millisecond)
	defer ticker.Stop()
	var last string
	for {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		resp, err := http.DefaultClient.Do(req)
		if err == nil {
			body, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
			last = fmt.Sprintf("%s: %s", resp.Status, strings.TrimSpace(string(body)))
		} else {
			last = err.Error()
		}
		select {
		case <-p.exited:
			waitErr := p.waitErr
			if waitErr == nil {
				waitErr = errors.New("exit status 0")
			}
			return fmt.Errorf("%s exited (%w) before %s was ready:\n%s", p.name, waitErr, url, p.logTail())
		case <-ctx.Done():
			return fmt.Errorf("%s: waiting for %s: %w (last: %s)\n%s", p.name, url, ctx.Err(), last, p.logTail())
		case <-ticker.C:
		}
	}
}

// freeAddr returns a loopback address with a port that was free a moment ago.
func freeAddr() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer l.Close()
	return l.Addr().String(), nil
}

// Tool returns the path of a pinned Prometheus tool (prometheus, promtool,
// alertmanager, amtool) installed by .ci/install-prometheus-tools.sh.
func Tool(name string) (string, error) {
	cache := os.Getenv("KRE_CACHE")
	if cache == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			return "", err
		}
		cache = filepath.Join(home, ".cache", "kafka_replication_exporter")
	}
	p := filepath.Join(cache, "bin", name)
	if _, err := os.Stat(p); err != nil {
		return "", fmt.Errorf("%s not installed (run .ci/install-prometheus-tools.sh): %w", name, err)
	}
	return p, nil
}
