package tail

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// stopAt follows path from the beginning until line n-1 is delivered (with
// the rest possibly held), then saves the position through a PositionStore
// and closes, like an exporter shutting down.
func stopAt(t *testing.T, path string, seq *sequence, store *PositionStore) {
	t.Helper()
	f := New(path, Options{FromBeginning: true})
	mustPoll(t, f, seq.deliver)
	if err := store.Save([]Position{f.Position()}); err != nil {
		t.Fatal(err)
	}
	f.Close()
}

// restart starts a follower from the saved position and polls once.
func restart(t *testing.T, path string, seq *sequence, store *PositionStore) *Follower {
	t.Helper()
	saved, _, err := store.Load()
	if err != nil {
		t.Fatal(err)
	}
	p, ok := saved[path]
	if !ok {
		t.Fatalf("no saved position for %s in %v", path, saved)
	}
	f := New(path, Options{Start: &p})
	mustPoll(t, f, seq.deliver)
	return f
}

func TestResumeInTheSameFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "server.log")
	store := NewPositionStore(filepath.Join(dir, "positions.json"))
	w := newLogWriter(t, path, 1)
	defer w.close()
	seq := &sequence{t: t, exact: true}
	w.write(100)
	rest := w.writeHalf() // a partial line must not be counted as read
	stopAt(t, path, seq, store)
	w.writeRaw(rest)
	w.write(50)
	f := restart(t, path, seq, store)
	defer f.Close()
	if seq.seen != w.next {
		t.Fatalf("delivered %d lines in total, wrote %d", seq.seen, w.next)
	}
}

// TestResumeAcrossRotationsWhileDown: the exporter stops in the middle of a
// file; while it is down the file is rotated three times. The restart reads
// the rest of the saved file, the two rolled after it, and the live file.
func TestResumeAcrossRotationsWhileDown(t *testing.T) {
	for _, tc := range []struct{ name, live, rolled string }{
		{"log4j time-based", "server.log", "server.log.2025-10-16-%02d"},
		{"log4j size-based", "server.log", "server.log.%d"},
		{"kubelet", "0.log", "0.log.20251016-1557%02d"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, tc.live)
			store := NewPositionStore(filepath.Join(dir, "positions.json"))
			w := newLogWriter(t, path, 2)
			defer w.close()
			rename := func(i int) {
				w.f.Close()
				if err := os.Rename(path, filepath.Join(dir, fmt.Sprintf(tc.rolled, 8+i))); err != nil {
					t.Fatal(err)
				}
				w.create()
			}
			w.write(100)
			rename(0)
			w.write(100)
			seq := &sequence{t: t, exact: true, next: 100} // starts in the second file
			stopAt(t, path, seq, store)
			w.write(100) // lands in the saved file after our position
			for i := 1; i <= 3; i++ {
				rename(i)
				w.write(100 + i)
			}
			f := restart(t, path, seq, store)
			defer f.Close()
			if seq.seen != w.next-100 { // the first 100 were never followed
				t.Fatalf("delivered %d lines, want %d", seq.seen, w.next-100)
			}
			w.write(5)
			mustPoll(t, f, seq.deliver)
			if seq.next != w.next || f.Stats().ResumeMisses != 0 {
				t.Fatalf("after the restart: last line %d of %d, stats %+v", seq.next-1, w.next-1, f.Stats())
			}
		})
	}
}

func TestResumeWhenTheSavedFileIsGone(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "server.log")
	store := NewPositionStore(filepath.Join(dir, "positions.json"))
	w := newLogWriter(t, path, 3)
	defer w.close()
	seq := &sequence{t: t}
	w.write(10)
	stopAt(t, path, seq, store)
	w.write(10)
	w.rotate()
	os.Remove(w.rolled[0]) // rotated and deleted while down
	w.write(10)
	f := restart(t, path, seq, store)
	defer f.Close()
	if st := f.Stats(); st.ResumeMisses != 1 || seq.seen != 20 || len(seq.skipped) != 10 {
		t.Fatalf("stats %+v; delivered %d, skipped %d", st, seq.seen, len(seq.skipped))
	}
}

func TestResumeWhenTheFileWasTruncatedWhileDown(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "server.log")
	store := NewPositionStore(filepath.Join(dir, "positions.json"))
	w := newLogWriter(t, path, 4)
	defer w.close()
	seq := &sequence{t: t}
	w.write(10)
	stopAt(t, path, seq, store)
	w.write(5) // lost: only in the copy
	w.copyTruncate()
	w.write(30) // regrows past the saved offset
	f := restart(t, path, seq, store)
	defer f.Close()
	if st := f.Stats(); st.Truncations != 1 || seq.next != w.next || len(seq.skipped) != 5 {
		t.Fatalf("stats %+v; last line %d of %d, skipped %d", st, seq.next-1, w.next-1, len(seq.skipped))
	}
}

func TestPositionStore(t *testing.T) {
	dir := t.TempDir()
	store := NewPositionStore(filepath.Join(dir, "positions.json"))
	got, _, err := store.Load()
	if err != nil || len(got) != 0 {
		t.Fatalf("Load of a missing file = %v, %v", got, err)
	}
	want := []Position{
		{Path: "/var/log/kafka/state-change.log", Dev: 1, Inode: 2, Offset: 3, HeadLen: 4, HeadHash: 1<<64 - 1},
		{Path: "/var/log/kafka/server.log", Dev: 5, Inode: 6, Offset: 7, HeadLen: 7, HeadHash: 8},
	}
	if err := store.Save(want); err != nil {
		t.Fatal(err)
	}
	got, _, err = store.Load()
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range want {
		if got[p.Path] != p {
			t.Errorf("loaded %+v, saved %+v", got[p.Path], p)
		}
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 1 {
		t.Errorf("temporary file left behind: %v", ents)
	}
}
