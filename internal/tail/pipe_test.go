package tail

import (
	"errors"
	"io"
	"os"
	"testing"
	"time"
)

// pollPipeToEnd polls every interval, as the exporter does, until the end
// of input or the deadline.
func pollPipeToEnd(t *testing.T, f *Follower, interval, deadline time.Duration, deliver func([]byte)) {
	t.Helper()
	ticker := time.NewTicker(interval)
	defer ticker.Stop()
	stop := time.After(deadline)
	for {
		err := f.Poll(deliver)
		if errors.Is(err, io.EOF) {
			return
		}
		if err != nil {
			t.Fatal(err)
		}
		select {
		case <-ticker.C:
		case <-stop:
			t.Fatalf("input not read to its end within %v: %+v", deadline, f.Stats())
		}
	}
}

func TestPipeIsReadToItsEnd(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var got lines
	f := NewPipe("-", r, Options{LineTime: lineTime})
	defer f.Close()
	if _, err := w.WriteString("2025-10-16T15:57:12.614Z stdout F one\ntw"); err != nil {
		t.Fatal(err)
	}
	for len(got) == 0 {
		mustPoll(t, f, got.deliver)
		time.Sleep(time.Millisecond)
	}
	equal(t, "first lines", got.take(), []string{"2025-10-16T15:57:12.614Z stdout F one"})
	if _, err := w.WriteString("o\nlast, unterminated"); err != nil {
		t.Fatal(err)
	}
	w.Close()
	pollPipeToEnd(t, f, time.Millisecond, 10*time.Second, got.deliver)
	equal(t, "to the end", got.take(), []string{"two", "last, unterminated"})
	if p := f.Position(); p.Path != "-" || p.Offset != 60 {
		t.Fatalf("position %+v", p)
	}
}

// Poll never waits for a quiet pipe: its caller may hold a lock, or be
// asked to stop.
func TestPollOnAQuietPipeReturnsAtOnce(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	defer r.Close()
	f := NewPipe("-", r, Options{LineTime: lineTime})
	defer f.Close()
	ret := make(chan error)
	go func() { ret <- f.Poll(func([]byte) {}) }()
	select {
	case err := <-ret:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Poll waited for a quiet pipe")
	}
}

// TestPipeAtDiskSpeed keeps a piped stdin from falling hours behind: a 50 MB
// log piped in is read to its end within seconds at the default poll
// interval, every line exactly once.
func TestPipeAtDiskSpeed(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var data []byte
	n := 0
	for ; len(data) < 50<<20; n++ {
		data = appendKafkaLine(data, n)
	}
	go func() {
		if _, err := w.Write(data); err != nil {
			t.Error(err)
		}
		w.Close()
	}()
	seq := &sequence{t: t, exact: true}
	f := NewPipe("-", r, Options{LineTime: lineTime})
	defer f.Close()
	start := time.Now()
	deadline := 5 * time.Second
	if raceEnabled {
		deadline = 5 * time.Minute
	}
	pollPipeToEnd(t, f, DefaultPollInterval, deadline, seq.deliver)
	if seq.seen != n {
		t.Fatalf("delivered %d lines, wrote %d", seq.seen, n)
	}
	t.Logf("%d MB, %d lines through a pipe in %v", len(data)>>20, n, time.Since(start).Round(time.Millisecond))
}
