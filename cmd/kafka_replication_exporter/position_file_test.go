//go:build unix

package main

import (
	"errors"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/kafka-replication-exporter/kafka_replication_exporter/internal/tail"
)

// A second exporter on a position file in use is refused with one clear
// line and exit 2, instead of overwriting the first one's positions.
func TestSecondExporterOnAPositionFileIsRefused(t *testing.T) {
	dir := t.TempDir()
	positions := filepath.Join(dir, "positions.json")
	first := tail.NewPositionStore(positions)
	if err := first.Lock(); err != nil {
		t.Fatal(err)
	}
	defer first.Close()
	type result struct {
		code int
		errs string
	}
	done := make(chan result, 1)
	go func() {
		code, _, errOut := runCLI(t, "", "serve", "--log.file="+filepath.Join(dir, "server.log"), "--log.position-file="+positions,
			"--web.listen-address=127.0.0.1:0", "--web.disable-exporter-metrics")
		done <- result{code, errOut}
	}()
	var r result
	select {
	case r = <-done:
	case <-time.After(20 * time.Second):
		t.Fatal("the second exporter was not refused: it runs")
	}
	var errLines []string
	for _, l := range strings.Split(strings.TrimSpace(r.errs), "\n") {
		if strings.HasPrefix(l, programName+": error: ") {
			errLines = append(errLines, l)
		}
	}
	if r.code != exitUsage || len(errLines) != 1 || !strings.Contains(errLines[0], "--log.position-file") ||
		!strings.Contains(errLines[0], "pid "+strconv.Itoa(os.Getpid())) || !strings.Contains(errLines[0], "its own position file") {
		t.Fatalf("want exit 2 and one line naming the holder, got %d:\n%s", r.code, r.errs)
	}
}

// An empty or torn position file is a warning and a count, not a refusal to
// start: the files are followed as if no position was saved.
func TestTornPositionFileStartsAsIfNoneWasSaved(t *testing.T) {
	for name, data := range map[string]string{"empty": "", "torn": `{"version":1,"positions":[{"path":"/x","dev":`} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			positions := filepath.Join(dir, "positions.json")
			if err := os.WriteFile(positions, []byte(data), 0o644); err != nil {
				t.Fatal(err)
			}
			logFile := writePartitionsLog(t, 10)
			sc, s := startSidecar(t, "--log.file="+logFile, "--log.from-beginning", "--log.position-file="+positions, "--log.poll-interval=20ms", "--web.disable-exporter-metrics")
			t.Cleanup(sc.close)
			waitFor(t, "the log read", 20*time.Second, func() bool { return sc.files[0].Stats().Records == 10 })
			body, _ := scrape(t, sc.handler(s), "/metrics", "")
			for _, want := range []string{
				`kafka_replication_position_file_load_problems_total{problem="` + name + `"} 1`,
				"kafka_replication_position_file_save_errors_total 0",
			} {
				if !strings.Contains(body, want+"\n") {
					t.Errorf("want %s in the scrape", want)
				}
			}
		})
	}
}

// A failed final save (the positions' directory is gone) makes the exit
// status 1, and the failure is logged: a supervisor sees that the next start
// will re-read or skip lines. A real process, because the exit status is
// the point.
func TestFailedFinalSaveExitsNonZero(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	dir := t.TempDir()
	bin := exporterBinary(t)
	logFile := writePartitionsLog(t, 10)
	posDir := filepath.Join(dir, "state")
	if err := os.Mkdir(posDir, 0o755); err != nil {
		t.Fatal(err)
	}
	addr := "127.0.0.1:" + strconv.Itoa(freePort(t))
	cmd := exec.Command(bin, "serve", "--log.file="+logFile, "--log.from-beginning", "--log.position-file="+filepath.Join(posDir, "positions.json"),
		"--log.poll-interval=20ms", "--web.listen-address="+addr, "--web.disable-exporter-metrics")
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() {
		_ = cmd.Process.Kill() // fails once the process has exited, as it should have
		if err := <-exited; err != nil {
			t.Logf("the exporter ended with %v", err)
		}
	})
	waitFor(t, "the exporter to serve", 20*time.Second, func() bool {
		body, err := getBody("http://" + addr + "/-/ready")
		return err == nil && strings.HasPrefix(body, "Ready")
	})
	if err := os.RemoveAll(posDir); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-exited:
		exited <- err // for the cleanup
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != exitViolation {
			t.Fatalf("want exit status %d, got %v\n%s", exitViolation, err, stderr.String())
		}
	case <-time.After(15 * time.Second):
		t.Fatalf("the exporter did not exit within 15s of SIGTERM\n%s", stderr.String())
	}
	if !strings.Contains(stderr.String(), "Saving log positions at shutdown failed") {
		t.Errorf("want the failed save logged, got\n%s", stderr.String())
	}
}

func getBody(url string) (string, error) {
	resp, err := http.Get(url)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return string(b), err
}
