//go:build unix

package main

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// writePartitionsLog writes one HW update for each of n partitions, which
// makes /metrics a body of several megabytes.
func writePartitionsLog(t *testing.T, n int) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "server.log")
	var b []byte
	for i := range n {
		b = fmt.Appendf(b, "[2026-11-30 10:00:00,100] DEBUG [Partition topic-%d-%d broker=1] High watermark updated from (offset=1, segment=[1:1]) to (offset=2, segment=[1:2]) (kafka.cluster.Partition)\n", i/100, i%100)
	}
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// stuckScraper sends GET /metrics, reads the status line, so that its
// request surely holds a slot, and reads nothing more. Its receive buffer is
// made small so that the server's writes really block.
func stuckScraper(addr string) (net.Conn, error) {
	d := net.Dialer{Control: func(_, _ string, rc syscall.RawConn) error {
		var err error
		if cerr := rc.Control(func(fd uintptr) {
			err = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, 4096)
		}); cerr != nil {
			return cerr
		}
		return err
	}}
	conn, err := d.Dial("tcp", addr)
	if err != nil {
		return nil, err
	}
	status := make([]byte, len("HTTP/1.1 200"))
	if _, err = io.WriteString(conn, "GET /metrics HTTP/1.1\r\nHost: "+addr+"\r\n\r\n"); err == nil {
		_, err = io.ReadFull(conn, status)
	}
	if err == nil && string(status) != "HTTP/1.1 200" {
		err = fmt.Errorf("want the answer to start with HTTP/1.1 200, got %q", status)
	}
	if err != nil {
		conn.Close()
		return nil, err
	}
	return conn, nil
}

// Clients that ask for /metrics and never read hold every --web.max-requests
// slot; the write timeout cuts them off, and a normal scrape gets through
// within that timeout. Ten slots stand for the default 40: each stuck client
// costs the server the render of a few megabytes (until the socket buffers
// are full), and the test must stay quick on a shared machine.
func TestStuckScrapersDoNotLockOutPrometheus(t *testing.T) {
	const partitions = 50_000 // two series each (the HW and its update counter): an 8 MB body
	const writeTimeout = 6 * time.Second
	const slots = 10
	addr := "127.0.0.1:" + strconv.Itoa(freePort(t))
	sc, s := startSidecar(t, "--log.file="+writePartitionsLog(t, partitions), "--log.from-beginning", "--log.poll-interval=20ms",
		"--web.listen-address="+addr, "--web.write-timeout="+writeTimeout.String(), "--web.max-requests="+strconv.Itoa(slots), "--web.disable-exporter-metrics")
	waitFor(t, "the log read", 20*time.Second, func() bool { return sc.files[0].Stats().Records == partitions })
	serveHTTP(t, sc, s, addr)

	client := &http.Client{Timeout: 5 * time.Second}
	scrape := func() (int, int64) {
		resp, err := client.Get("http://" + addr + "/metrics")
		if err != nil {
			return -1, 0
		}
		defer resp.Body.Close()
		n, err := io.Copy(io.Discard, resp.Body)
		if err != nil {
			return -1, n
		}
		return resp.StatusCode, n
	}
	// Under -race at load 14 on two cores, rendering and writing 8 MB once
	// outlasted a 3 s write timeout: the baseline may take a few tries.
	var size int64
	waitFor(t, "a scrape before the attack", 60*time.Second, func() bool {
		code, n := scrape()
		size = n
		return code == http.StatusOK
	})
	t.Logf("/metrics is %.1f MB", float64(size)/(1<<20))

	attacked := time.Now()
	stuck := make(chan error, slots)
	for range slots {
		go func() {
			conn, err := stuckScraper(addr)
			if err == nil {
				t.Cleanup(func() { conn.Close() })
			}
			stuck <- err
		}()
	}
	for range slots {
		if err := <-stuck; err != nil {
			t.Fatalf("stuck scraper: %v", err)
		}
	}
	// On a loaded machine the first stuck writes may already have timed out.
	if setup := time.Since(attacked); setup < writeTimeout/2 {
		if code, _ := scrape(); code != http.StatusServiceUnavailable {
			t.Fatalf("want the stuck scrapers to hold every slot (503), got %d", code)
		}
	} else {
		t.Logf("setting up the stuck scrapers took %s: the lockout is not checked", setup)
	}
	waitFor(t, "a scrape to succeed again", time.Until(attacked.Add(writeTimeout+20*time.Second)), func() bool {
		code, n := scrape()
		return code == http.StatusOK && n == size
	})
	t.Logf("a full scrape succeeded %s after %d stuck scrapers arrived", time.Since(attacked).Round(10*time.Millisecond), slots)
}

// heapInUse is the live heap after a full collection.
func heapInUse() uint64 {
	var ms runtime.MemStats
	runtime.GC()
	runtime.GC()
	runtime.ReadMemStats(&ms)
	return ms.HeapInuse
}

// rssBytes is the process's resident set size (VmRSS), 0 if unknown.
func rssBytes() uint64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for line := range strings.Lines(string(b)) {
		if rest, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, _ := strconv.ParseUint(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 10, 64)
			return kb << 10
		}
	}
	return 0
}

// Clients that ask for /metrics and never read must not each pin a
// rendering: 40 of them, arriving one after another, hold no more than two
// scrape bodies of memory above idle, where each used to hold its own. The
// state is 5,000
// partitions of log-derived series (STUCK_PARTITIONS sets another number,
// for docs/benchmarks.md).
func TestStuckScrapersShareOneRendering(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a large state")
	}
	partitions := 5_000
	if n, err := strconv.Atoi(os.Getenv("STUCK_PARTITIONS")); err == nil {
		partitions = n
	}
	const clients = 40
	addr := "127.0.0.1:" + strconv.Itoa(freePort(t))
	sc, s := startSidecar(t, "--log.file="+writePartitionsLog(t, partitions), "--log.from-beginning", "--log.poll-interval=20ms",
		"--web.listen-address="+addr, "--web.write-timeout=5m", "--web.max-requests=100", "--web.disable-exporter-metrics")
	waitFor(t, "the log read", 60*time.Second, func() bool { return sc.files[0].Stats().Records == uint64(partitions) })
	serveHTTP(t, sc, s, addr)

	get := func() int64 {
		resp, err := http.Get("http://" + addr + "/metrics")
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		n, err := io.Copy(io.Discard, resp.Body)
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	body := get()
	get() // the pools warm
	idleHeap, idleRSS := heapInUse(), rssBytes()

	for range clients {
		conn, err := stuckScraper(addr)
		if err != nil {
			t.Fatalf("stuck scraper: %v", err)
		}
		t.Cleanup(func() { conn.Close() })
	}
	time.Sleep(500 * time.Millisecond) // the writes block on full socket buffers
	heap, rss := heapInUse(), rssBytes()
	mb := func(b uint64) float64 { return float64(b) / (1 << 20) }
	t.Logf("%d partitions, body %.1f MB; idle heap %.1f MB, RSS %.1f MB; with %d stuck clients heap %.1f MB (+%.1f), RSS %.1f MB (+%.1f)",
		partitions, mb(uint64(body)), mb(idleHeap), mb(idleRSS), clients, mb(heap), mb(heap-min(heap, idleHeap)), mb(rss), mb(rss-min(rss, idleRSS)))
	if above := heap - min(heap, idleHeap); above > 2*uint64(body)+8<<20 {
		t.Errorf("%d stuck clients hold %.1f MB of heap above idle, want at most two bodies (2 × %.1f MB)", clients, mb(above), mb(uint64(body)))
	}
	if code := func() int {
		resp, err := (&http.Client{Timeout: 20 * time.Second}).Get("http://" + addr + "/metrics")
		if err != nil {
			return -1
		}
		defer resp.Body.Close()
		if _, err := io.Copy(io.Discard, resp.Body); err != nil {
			return -2
		}
		return resp.StatusCode
	}(); code != http.StatusOK {
		t.Errorf("want a scrape beside the stuck clients to succeed, got %d", code)
	}
}
