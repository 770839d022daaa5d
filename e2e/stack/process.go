package stack

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/kafka-replication-exporter/kafka_replication_exporter/e2e/harness"
)

// process is a child program whose output goes to a log file.
type process struct {
	name    string
	cmd     *exec.Cmd
	logPath string
	logAt   int64 // size of the log file when the process started
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
	var logAt int64
	if fi, err := out.Stat(); err == nil {
		logAt = fi.Size()
	}
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = out, out
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	p := &process{name: name, cmd: cmd, logPath: logPath, logAt: logAt, exited: make(chan struct{})}
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
		// Each request is bounded, so that a port that accepts and never
		// answers does not hide the process's exit.
		reqCtx, cancelReq := context.WithTimeout(ctx, 2*time.Second)
		req, _ := http.NewRequestWithContext(reqCtx, http.MethodGet, url, nil)
		resp, err := http.DefaultClient.Do(req)
		if err == nil {
			body, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				cancelReq()
				select {
				case <-p.exited: // the answer came from whoever holds the port
					return p.exitError(url + " was ready")
				default:
					return nil
				}
			}
			last = fmt.Sprintf("%s: %s", resp.Status, strings.TrimSpace(string(body)))
		} else {
			last = err.Error()
		}
		cancelReq()
		select {
		case <-p.exited:
			return p.exitError(url + " was ready")
		case <-ctx.Done():
			return fmt.Errorf("%s: waiting for %s: %w (last: %s)\n%s", p.name, url, ctx.Err(), last, p.logTail())
		case <-ticker.C:
		}
	}
}

// bindTries is how many times a server whose port was taken between its
// choice and its bind is started in all.
const bindTries = 3

// logf reports a retried start; tests replace it. A retry is rare and worth
// seeing: .ci/e2e.sh counts the "address already in use" lines of its log.
var logf = func(format string, args ...any) { fmt.Fprintf(os.Stderr, "stack: "+format+"\n", args...) }

// chooseAddr is harness.ListenAddr (a port outside the ephemeral range, never
// handed out twice); tests replace it to hand out a port they hold.
var chooseAddr = harness.ListenAddr

// startOnFreeAddr starts a server with start on an address from chooseAddr,
// or on addr if it is not empty, and waits with ready. A server that exits
// saying its port is in use is started again on a new address (not on a
// given one), bindTries in all, each retry logged.
func startOnFreeAddr(addr string, start func(addr string) (*process, error), ready func(p *process, addr string) error) (*process, string, error) {
	fixed := addr != ""
	for try := 1; ; try++ {
		if !fixed {
			var err error
			if addr, err = chooseAddr(); err != nil {
				return nil, "", err
			}
		}
		p, err := start(addr)
		if err != nil {
			return nil, "", err
		}
		err = ready(p, addr)
		if err == nil {
			return p, addr, nil
		}
		p.stop()
		line := p.bindFailure()
		if fixed || line == "" || try == bindTries {
			return nil, "", err
		}
		logf("%s on %s: %s; trying again on a new port (try %d of %d)", p.name, addr, line, try+1, bindTries)
	}
}

// bindFailureRe matches a Go server's "bind: address already in use"
// (Prometheus, Alertmanager, the exporter).
var bindFailureRe = regexp.MustCompile(`(?i)address already in use`)

// bindFailure is the line of the process's output since its start that says
// its port was in use, or "" (also while it runs).
func (p *process) bindFailure() string {
	select {
	case <-p.exited:
	default:
		return ""
	}
	b, err := os.ReadFile(p.logPath)
	if err != nil || int64(len(b)) < p.logAt {
		return ""
	}
	for _, line := range strings.Split(string(b[p.logAt:]), "\n") {
		if bindFailureRe.MatchString(line) {
			return strings.TrimSpace(line)
		}
	}
	return ""
}

// exitError describes the process's exit, with the end of its output.
func (p *process) exitError(before string) error {
	waitErr := p.waitErr
	if waitErr == nil {
		waitErr = errors.New("exit status 0")
	}
	return fmt.Errorf("%s exited (%w) before %s:\n%s", p.name, waitErr, before, p.logTail())
}

// waitAddressFile waits for the file in which the exporter writes the address
// it bound (--web.listen-address-file) and returns its first line, failing
// at once if the process exits first.
func (p *process) waitAddressFile(ctx context.Context, path string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	ticker := time.NewTicker(20 * time.Millisecond)
	defer ticker.Stop()
	for {
		if b, err := os.ReadFile(path); err == nil {
			addr, _, _ := strings.Cut(string(b), "\n")
			if addr != "" {
				return addr, nil
			}
		}
		select {
		case <-p.exited:
			return "", p.exitError("writing " + path)
		case <-ctx.Done():
			return "", fmt.Errorf("%s: no %s: %w\n%s", p.name, path, ctx.Err(), p.logTail())
		case <-ticker.C:
		}
	}
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
