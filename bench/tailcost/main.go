// Command tailcost measures what following a busy log costs. It has two
// modes, run as two processes so that /usr/bin/time -v can account the
// follower alone:
//
//	tailcost write  -path F -rate 100000 -seconds 20 -rotate-every 200000
//	tailcost follow -path F -seconds 22
//
// The writer appends Kafka "High watermark updated" lines at the given rate
// (in 10 ms batches) and rotates by rename+create. The follower counts the
// lines and checks their numbers arrive exactly once, in order.
package main

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"strconv"
	"time"

	"github.com/kafka-replication-exporter/kafka_replication_exporter/internal/tail"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: tailcost write|follow [flags]")
		os.Exit(2)
	}
	fs := flag.NewFlagSet(os.Args[1], flag.ExitOnError)
	path := fs.String("path", "server.log", "log file")
	seconds := fs.Float64("seconds", 20, "how long to run")
	rate := fs.Int("rate", 100_000, "lines per second (write)")
	rotateEvery := fs.Int("rotate-every", 200_000, "lines between rotations (write)")
	_ = fs.Parse(os.Args[2:]) // ExitOnError: a bad flag exits here
	d := time.Duration(*seconds * float64(time.Second))
	var err error
	switch os.Args[1] {
	case "write":
		err = write(*path, *rate, *rotateEvery, d)
	case "follow":
		err = follow(*path, d)
	default:
		err = fmt.Errorf("unknown mode %q", os.Args[1])
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

func line(b []byte, n int) []byte {
	b = append(b, "[2025-10-16 15:57:12,614] DEBUG [Partition performance-test-0 broker=1] High watermark updated from (offset="...)
	b = strconv.AppendInt(b, int64(n), 10)
	b = append(b, ", segment=[16:76938]) to (offset="...)
	b = strconv.AppendInt(b, int64(n+1), 10)
	return append(b, ", segment=[16:78032]) (kafka.cluster.Partition)\n"...)
}

func write(path string, rate, rotateEvery int, d time.Duration) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	const tick = 10 * time.Millisecond
	perTick := rate / int(time.Second/tick)
	start := time.Now()
	n, rolled := 0, 0
	var buf []byte
	for i := 1; time.Since(start) < d; i++ {
		buf = buf[:0]
		for range perTick {
			buf = line(buf, n)
			n++
			if n%rotateEvery == 0 {
				if _, err := f.Write(buf); err != nil {
					return err
				}
				buf = buf[:0]
				f.Close()
				if err := os.Rename(path, fmt.Sprintf("%s.%d", path, rolled)); err != nil {
					return err
				}
				rolled++
				if f, err = os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644); err != nil {
					return err
				}
			}
		}
		if _, err := f.Write(buf); err != nil {
			return err
		}
		time.Sleep(time.Until(start.Add(time.Duration(i) * tick)))
	}
	fmt.Printf("wrote %d lines, %d rotations, %.0f lines/s\n", n, rolled, float64(n)/time.Since(start).Seconds())
	return f.Close()
}

// follow polls the file every tail.DefaultPollInterval, as the exporter
// does, for d.
func follow(path string, d time.Duration) error {
	f := tail.New(path, tail.Options{FromBeginning: true})
	defer f.Close()
	next, bad := 0, 0
	key := []byte("from (offset=")
	deliver := func(l []byte) {
		i := bytes.Index(l, key)
		if i < 0 {
			bad++
			return
		}
		rest := l[i+len(key):]
		j := bytes.IndexByte(rest, ',')
		n, err := strconv.Atoi(string(rest[:max(j, 0)]))
		if err != nil || n != next {
			bad++
		}
		next = n + 1
	}
	ticker := time.NewTicker(tail.DefaultPollInterval)
	defer ticker.Stop()
	end := time.After(d)
	for {
		if err := f.Poll(deliver); err != nil {
			fmt.Fprintln(os.Stderr, "poll:", err)
		}
		select {
		case <-ticker.C:
			continue
		case <-end:
		}
		break
	}
	if err := f.Poll(deliver); err != nil {
		fmt.Fprintln(os.Stderr, "poll:", err)
	}
	st := f.Stats()
	fmt.Printf("followed %d lines, %d rotations, %d out of sequence\n", st.Lines, st.Rotations, bad)
	return nil
}
