package tail

import (
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"
)

// TestFollowARealWriter polls, as the exporter does, while a writer
// goroutine appends and rotates by rename+create. The writer ends with a
// marker line; the reader is done when the marker arrives. Exactly-once is
// checked through the line numbers.
func TestFollowARealWriter(t *testing.T) {
	total, every := 200_000, 2_000 // 100 rotations
	if testing.Short() {
		total = 20_000
	}
	path := filepath.Join(t.TempDir(), "server.log")
	w := newLogWriter(t, path, 9)
	w.keep = 1000 // a slow reader must still find every rolled file
	seq := &sequence{t: nonFatal{t}, exact: true}
	f := New(path, Options{LineTime: lineTime, FromBeginning: true})
	mustPoll(t, f, seq.deliver) // open the file before the writer rotates it

	const marker = "END OF TEST"
	done := false
	deliver := func(line []byte) {
		if string(line) == marker {
			done = true
			return
		}
		seq.deliver(line)
	}
	var wg sync.WaitGroup
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
	ticker := time.NewTicker(50 * time.Millisecond)
	defer ticker.Stop()
	deadline := time.After(60 * time.Second)
	for !done {
		select {
		case err := <-werr:
			if err != nil {
				t.Fatal(err)
			}
		case <-ticker.C:
			mustPoll(t, f, deliver)
		case <-deadline:
			t.Fatalf("marker not seen within 60s; last line %d of %d", seq.next-1, total-1)
		}
	}
	wg.Wait()
	f.Close()
	if seq.seen != total {
		t.Fatalf("delivered %d lines, wrote %d", seq.seen, total)
	}
	if st := f.Stats(); st.Rotations != uint64(total/every) || st.Ready {
		t.Fatalf("stats after Close %+v", st)
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
