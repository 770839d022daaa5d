package tail

import (
	"context"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"
)

// TestRunWithARealWriter runs Run (with the directory watch) against a
// writer goroutine that rotates by rename+create. The writer ends with a
// marker line; the reader is done when the marker arrives. Exactly-once is
// checked through the line numbers.
func TestRunWithARealWriter(t *testing.T) {
	total, every := 200_000, 2_000 // 100 rotations
	if testing.Short() {
		total = 20_000
	}
	path := filepath.Join(t.TempDir(), "server.log")
	w := newLogWriter(t, path, 9)
	w.keep = 1000 // a slow reader must still find every rolled file
	seq := &sequence{t: nonFatal{t}, exact: true}
	f := New(path, Options{FromBeginning: true, UseFsnotify: true, PollInterval: 50 * time.Millisecond})
	mustPoll(t, f, seq.deliver) // open the file before the writer rotates it

	const marker = "END OF TEST"
	done := make(chan struct{})
	deliver := func(line []byte) {
		if string(line) == marker {
			close(done)
			return
		}
		seq.deliver(line)
	}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	var runErr error
	wg.Go(func() { runErr = f.Run(ctx, deliver) })

	// The writer goroutine must not call t.Fatal: it reports errors here.
	werr := make(chan error, 1)
	wg.Go(func() {
		defer w.close()
		for w.next < total {
			w.write(100)
			if w.next%every == 0 {
				if err := rotateQuietly(w); err != nil {
					werr <- err
					return
				}
			}
		}
		_, err := w.f.WriteString(marker + "\n")
		werr <- err
	})
	if err := <-werr; err != nil {
		t.Fatal(err)
	}
	select {
	case <-done:
	case <-time.After(60 * time.Second):
		t.Fatalf("marker not seen within 60s; last line %d of %d", seq.next-1, total-1)
	}
	cancel()
	wg.Wait()
	if runErr != nil {
		t.Fatal(runErr)
	}
	if seq.seen != total {
		t.Fatalf("delivered %d lines, wrote %d", seq.seen, total)
	}
	if st := f.Stats(); st.Rotations != uint64(total/every) || st.Ready {
		t.Fatalf("stats after Run %+v", st)
	}
}

// nonFatal turns Fatalf into Errorf for checks run on another goroutine,
// where t.Fatal must not be called.
type nonFatal struct{ testing.TB }

func (n nonFatal) Fatalf(format string, args ...any) {
	n.Helper()
	n.Errorf(format, args...)
}

// rotateQuietly is logWriter.rotate without t.Fatal, for a goroutine.
func rotateQuietly(w *logWriter) error {
	if err := w.f.Close(); err != nil {
		return err
	}
	name := w.path + "." + time.Now().Format("20060102-150405.000000000")
	if err := os.Rename(w.path, name); err != nil {
		return err
	}
	f, err := os.OpenFile(w.path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	w.f = f
	return err
}

func TestRunReturnsAtTheEndOfAPipe(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	var got lines
	f := NewPipe("-", r, Options{})
	go func() {
		w.WriteString("a\nb\nc")
		w.Close()
	}()
	if err := f.Run(context.Background(), got.deliver); err != nil {
		t.Fatal(err)
	}
	equal(t, "lines", got.take(), []string{"a", "b", "c"})
}

func TestRunOnAPipeStopsWhenCancelled(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	f := NewPipe("-", r, Options{})
	ctx, cancel := context.WithCancel(context.Background())
	ret := make(chan error)
	go func() { ret <- f.Run(ctx, func([]byte) {}) }()
	cancel() // the read is blocked: nothing is written
	select {
	case err := <-ret:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Run did not return after cancellation")
	}
}
