package tail

import (
	"path/filepath"
	"testing"
	"time"
)

// TestTortureRenameRotation interleaves a fast writer that rotates by
// rename+create with Poll calls, deterministically (seeded): batches of
// random size, lines split across two write() calls, rotations between polls
// (up to three in a row), inside a poll (between two reads, and between the
// EOF and the stat of the path), and with the path missing for a while
// (rename done, create not yet). Every line must arrive exactly once, intact
// and in order.
func TestTortureRenameRotation(t *testing.T) {
	rotations := 1000
	if testing.Short() {
		rotations = 100
	}
	path := filepath.Join(t.TempDir(), "server.log")
	w := newLogWriter(t, path, 42)
	defer w.close()
	rng := w.rng
	seq := &sequence{t: t, exact: true}
	f := New(path, Options{LineTime: lineTime, FromBeginning: true})
	defer f.Close()

	rotated, sincePoll, sinceRotation := 0, 0, 0
	threshold := func() int { return 1000 + rng.IntN(3000) } // "every few thousand lines"
	nextRotation := threshold()
	rotate := func() {
		w.rotate()
		rotated++
		sincePoll++
		sinceRotation = 0
		nextRotation = threshold()
	}
	// The writer may act inside a poll, as a concurrent one would, except
	// while it is in the middle of writing a line in two halves.
	writerBusy := false
	f.hook = func(at hookPoint) {
		switch {
		case writerBusy:
		case rng.IntN(4) == 0:
			n := 1 + rng.IntN(200)
			w.write(n)
			sinceRotation += n
		case at == beforeStat && sinceRotation >= nextRotation && sincePoll < 3 && rng.IntN(4) == 0:
			// Lines land after our EOF, then the file is rotated away
			// before we stat the path: only a second drain finds them.
			w.write(1 + rng.IntN(50))
			rotate()
		}
	}
	start := time.Now()
	for rotated < rotations {
		switch r := rng.IntN(10); {
		case r < 5:
			n := 1 + rng.IntN(2500)
			w.write(n)
			sinceRotation += n
		case r < 6:
			rest := w.writeHalf()
			writerBusy = true
			mustPoll(t, f, seq.deliver)
			writerBusy = false
			w.writeRaw(rest)
			sincePoll = 0
		default:
			mustPoll(t, f, seq.deliver)
			sincePoll = 0
		}
		// Never more than three rotations between polls: the writer keeps
		// eight rolled files, and one deleted before we ever saw it would
		// be lost, as it would be in production.
		if sinceRotation >= nextRotation && sincePoll < 3 {
			if rng.IntN(8) == 0 {
				w.renameAway()
				writerBusy = true           // the writer is between close and create
				mustPoll(t, f, seq.deliver) // the path does not exist now
				writerBusy = false
				w.create()
				rotated++
				sinceRotation = 0
				nextRotation = threshold()
				sincePoll = 0
			} else {
				rotate()
			}
		}
	}
	f.hook = nil
	mustPoll(t, f, seq.deliver)
	elapsed := time.Since(start)

	if seq.seen != w.next {
		t.Fatalf("delivered %d lines, wrote %d", seq.seen, w.next)
	}
	st := f.Stats()
	if st.Rotations != uint64(rotations) {
		t.Errorf("Stats.Rotations = %d, want %d", st.Rotations, rotations)
	}
	if st.Lines != uint64(w.next) {
		t.Errorf("Stats.Lines = %d, want %d", st.Lines, w.next)
	}
	t.Logf("%d lines, %d rotations, exactly once and in order; %.0f lines/s written+followed (%v)",
		w.next, rotated, float64(w.next)/elapsed.Seconds(), elapsed.Round(time.Millisecond))
}

// TestTortureCopyTruncate does the same with copytruncate. Lines written
// after the follower's last read and before a truncation exist only in the
// copy; they are the documented loss. The test counts, at every truncation,
// how many written lines had not been delivered yet, and checks that the loss
// never exceeds that sum, that every lost line lies in such a window, and
// that no line is ever delivered twice. Some truncations are followed by
// enough writes to regrow the file past the old offset before the next
// poll, which only the head fingerprint can detect.
func TestTortureCopyTruncate(t *testing.T) {
	// harsh: a truncation every few writer steps, often inside a poll;
	// steady: polls between most batches, a truncation now and then.
	t.Run("harsh", func(t *testing.T) { tortureCopyTruncate(t, 7, 1000, 3, 6) })
	t.Run("steady", func(t *testing.T) { tortureCopyTruncate(t, 8, 200, 40, 100) })
}

// tortureCopyTruncate truncates with probability 1/truncEvery per writer
// step and 1/hookEvery per hook call.
func tortureCopyTruncate(t *testing.T, seed uint64, truncations, truncEvery, hookEvery int) {
	if testing.Short() {
		truncations /= 10
	}
	path := filepath.Join(t.TempDir(), "server.log")
	w := newLogWriter(t, path, seed)
	defer w.close()
	rng := w.rng
	seq := &sequence{t: t}
	f := New(path, Options{LineTime: lineTime, FromBeginning: true})
	defer f.Close()

	type window struct{ from, to int } // lines [from, to) at risk
	var windows []window
	bound := 0
	truncate := func() {
		from := seq.next
		if len(windows) > 0 {
			from = max(from, windows[len(windows)-1].to) // count overlaps once
		}
		windows = append(windows, window{from, w.next})
		bound += w.next - from
		w.copyTruncate()
	}
	done := 0
	f.hook = func(at hookPoint) {
		switch {
		case rng.IntN(6) == 0:
			w.write(1 + rng.IntN(300))
		case rng.IntN(hookEvery) == 0:
			if done < truncations {
				truncate()
				done++
				w.write(1 + rng.IntN(3000)) // may regrow past our offset
			}
		}
	}
	for done < truncations {
		switch r := rng.IntN(truncEvery); {
		case r%2 == 0 && r > 0:
			w.write(1 + rng.IntN(2500))
		case r%2 == 1:
			mustPoll(t, f, seq.deliver)
		default:
			truncate()
			done++
			if rng.IntN(2) == 0 {
				w.write(2000 + rng.IntN(3000)) // regrow past the old offset
			}
		}
	}
	// Lines after the last truncation must all arrive.
	f.hook = nil
	w.write(100)
	mustPoll(t, f, seq.deliver)

	if seq.next != w.next {
		t.Fatalf("last delivered line is %d, last written %d", seq.next-1, w.next-1)
	}
	lost := len(seq.skipped)
	if lost > bound {
		t.Fatalf("lost %d lines, more than the %d written-but-unread at truncation time", lost, bound)
	}
	wi := 0
	for _, n := range seq.skipped {
		for wi < len(windows) && windows[wi].to <= n {
			wi++
		}
		if wi == len(windows) || n < windows[wi].from {
			t.Fatalf("line %d lost outside any truncation window", n)
		}
	}
	st := f.Stats()
	t.Logf("%d lines, %d truncations (%d detected), lost %d (bound %d, %.3f%%), no duplicates",
		w.next, done, st.Truncations, lost, bound, 100*float64(lost)/float64(w.next))
}
