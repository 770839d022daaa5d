// Command stuckscrapers holds scrapes that never read, for
// bench/stuck-scrapers.sh: n TCP connections to an exporter, each with a
// small receive buffer, each asking /metrics with a query of its own (every
// other one with gzip), so that no two share a body. Each reads the status
// line, so that its body surely is rendered, and nothing more.
//
//	stuckscrapers -addr 127.0.0.1:19745 -n 40
//
// It prints "N answered, M closed unanswered" once every status line is in
// or the exporter closed the connection first, then holds them until
// SIGINT/SIGTERM.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"os/signal"
	"strings"
	"syscall"
)

// families are the big partition families each query asks for, beside a
// name of its own that makes the query distinct.
var families = []string{
	"kafka_replication_partition_replicas", "kafka_replication_partition_in_sync_replicas",
	"kafka_replication_partition_leader", "kafka_replication_partition_leader_epoch",
	"kafka_replication_partition_high_watermark", "kafka_replication_partition_log_end_offset",
	"kafka_replication_partition_min_insync_replicas", "kafka_replication_partition_isr_headroom",
	"kafka_replication_partition_high_watermark_regressions_total",
}

func main() {
	addr := flag.String("addr", "127.0.0.1:19745", "the exporter's address")
	n := flag.Int("n", 40, "connections")
	flag.Parse()
	done := make(chan error, *n)
	for i := range *n {
		go func() { done <- stick(*addr, i) }()
	}
	cut := 0
	for range *n {
		switch err := <-done; {
		case errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, syscall.ECONNRESET):
			cut++
		case err != nil:
			fmt.Fprintln(os.Stderr, "stuckscrapers:", err)
			os.Exit(1)
		}
	}
	fmt.Printf("%d answered, %d closed unanswered\n", *n-cut, cut)
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGINT, syscall.SIGTERM)
	<-sig
}

// stick opens connection i, asks its query and reads the status line.
func stick(addr string, i int) error {
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
		return err
	}
	// Held open until the process ends.
	q := "name[]=" + strings.Join(families, "&name[]=") + fmt.Sprintf("&name[]=kafka_replication_stuck_%d", i)
	enc := ""
	if i%2 == 1 {
		enc = "Accept-Encoding: gzip\r\n"
	}
	if _, err := fmt.Fprintf(conn, "GET /metrics?%s HTTP/1.1\r\nHost: %s\r\n%s\r\n", q, addr, enc); err != nil {
		return err
	}
	status := make([]byte, len("HTTP/1.1 200"))
	if _, err := io.ReadFull(conn, status); err != nil {
		return fmt.Errorf("connection %d: %w", i, err)
	}
	if string(status) != "HTTP/1.1 200" {
		return fmt.Errorf("connection %d: answered %q", i, status)
	}
	return nil
}
