package harness

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"time"
)

const (
	pollInterval = 250 * time.Millisecond
	// waitTimeout bounds each Wait* call on top of the caller's context, so a
	// scenario stuck on one condition fails with a message instead of
	// running into the test binary's global timeout.
	waitTimeout = 90 * time.Second
)

// poll calls check until it reports done, ctx ends or waitTimeout passes.
// check's last error is part of the timeout error.
func (c *Cluster) poll(ctx context.Context, what string, check func() (bool, error)) error {
	ctx, cancel := context.WithTimeout(ctx, waitTimeout)
	defer cancel()
	ticker := time.NewTicker(pollInterval)
	defer ticker.Stop()
	var last error
	for {
		done, err := check()
		if done && err == nil {
			return nil
		}
		var p permanent
		if errors.As(err, &p) {
			return p.err
		}
		last = err
		if dead := c.deadNodes(); dead != nil {
			return dead
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("waiting for %s: %w (last error: %w)", what, ctx.Err(), last)
		case <-ticker.C:
		}
	}
}

// permanent wraps an error that makes poll give up at once.
type permanent struct{ err error }

func (p permanent) Error() string { return p.err.Error() }

// deadNodes reports a node whose JVM exited on its own (say, a config error),
// with the end of its console output, so waits fail fast and explain why.
func (c *Cluster) deadNodes() error {
	for _, n := range c.all() {
		n.mu.Lock()
		started, exited, waitErr := n.proc != nil, n.exited, n.waitErr
		n.mu.Unlock()
		if !started {
			continue
		}
		select {
		case <-exited:
			if waitErr != nil && !n.stoppedOnPurpose() {
				return fmt.Errorf("node %d exited: %w\n%s", n.ID, waitErr, n.consoleTail())
			}
		default:
		}
	}
	return nil
}

// WaitReady waits until every running broker is registered and unfenced in
// the cluster's metadata.
func (c *Cluster) WaitReady(ctx context.Context) error {
	var want []int32
	for _, n := range c.nodes {
		if n.Running() {
			want = append(want, n.ID)
		}
	}
	return c.poll(ctx, fmt.Sprintf("brokers %v", want), func() (bool, error) {
		got, err := c.Brokers()
		if err != nil {
			return false, err
		}
		if !slices.Equal(got, want) {
			return false, fmt.Errorf("brokers are %v", got)
		}
		return true, nil
	})
}

// WaitPartition waits until cond holds for the partition and returns the
// state that satisfied it.
func (c *Cluster) WaitPartition(ctx context.Context, topic string, partition int32, what string, cond func(PartitionState) bool) (PartitionState, error) {
	var st PartitionState
	err := c.poll(ctx, fmt.Sprintf("%s-%d: %s", topic, partition, what), func() (bool, error) {
		var err error
		if st, err = c.Partition(topic, partition); err != nil {
			return false, err
		}
		if !cond(st) {
			return false, fmt.Errorf("state is %+v", st)
		}
		return true, nil
	})
	return st, err
}

// WaitLeader waits until the partition has a leader and returns it.
func (c *Cluster) WaitLeader(ctx context.Context, topic string, partition int32) (int32, error) {
	st, err := c.WaitPartition(ctx, topic, partition, "a leader", func(s PartitionState) bool { return s.Leader >= 0 })
	return st.Leader, err
}

// WaitISR waits until the partition's ISR has exactly n members.
func (c *Cluster) WaitISR(ctx context.Context, topic string, partition int32, n int) (PartitionState, error) {
	return c.WaitPartition(ctx, topic, partition, fmt.Sprintf("ISR of size %d", n), func(s PartitionState) bool { return len(s.ISR) == n })
}

// WaitLogLine waits until one of a node's log files (e.g. "server.log",
// rolled files included) has a line matching re, and returns the first match.
func (c *Cluster) WaitLogLine(ctx context.Context, id int32, file string, re *regexp.Regexp) (string, error) {
	var line string
	err := c.poll(ctx, fmt.Sprintf("node %d %s: /%s/", id, file, re), func() (bool, error) {
		var err error
		line, err = grepFiles(c.Node(id), file, re)
		return line != "", err
	})
	return line, err
}

// GrepLog returns every line of a node's log (rolled files included, oldest
// first) that matches re.
func (c *Cluster) GrepLog(id int32, file string, re *regexp.Regexp) ([]string, error) {
	files, err := c.Node(id).LogFiles(file)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, f := range files {
		err := scanLines(f, func(line string) bool {
			if re.MatchString(line) {
				out = append(out, line)
			}
			return true
		})
		if err != nil {
			return out, err
		}
	}
	return out, nil
}

func grepFiles(n *Node, file string, re *regexp.Regexp) (string, error) {
	files, err := n.LogFiles(file)
	if err != nil {
		return "", err
	}
	var found string
	for _, f := range files {
		err := scanLines(f, func(line string) bool {
			if re.MatchString(line) {
				found = line
				return false
			}
			return true
		})
		if err != nil || found != "" {
			return found, err
		}
	}
	return "", nil
}

// scanLines calls f for each line of a file until f returns false.
func scanLines(path string, f func(string) bool) error {
	file, err := os.Open(filepath.Clean(path))
	if err != nil {
		return err
	}
	defer file.Close()
	s := bufio.NewScanner(file)
	s.Buffer(make([]byte, 64*1024), 4*1024*1024)
	for s.Scan() {
		if !f(s.Text()) {
			return nil
		}
	}
	return s.Err()
}
