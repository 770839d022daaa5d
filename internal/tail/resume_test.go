package tail

import (
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"testing"
)

// stopAt follows path from the beginning until line n-1 is delivered (with
// the rest possibly held), then saves the position through a PositionStore
// and closes, like an exporter shutting down.
func stopAt(t *testing.T, path string, seq *sequence, store *PositionStore) {
	t.Helper()
	f := New(path, Options{LineTime: lineTime, FromBeginning: true})
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
	f := New(path, Options{LineTime: lineTime, Start: &p})
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

// replaceWithCopy replaces path by a copy of its first n bytes (all of it
// when n < 0), as a backup restore or a config-management tool does: same
// bytes, another inode (`cp -p server.log x && mv x server.log`), or, with
// inPlace, the same inode rewritten (`cp backup server.log`).
func replaceWithCopy(t *testing.T, path string, n int, inPlace bool) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if n >= 0 {
		data = data[:n]
	}
	if inPlace {
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	tmp := path + ".copy"
	if err := os.WriteFile(tmp, data, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
}

// A file replaced while we were down by one that starts with the same bytes
// is the same log: the identity of a file is its content, not its inode. At
// least as long as the saved offset, it is read on from there; shorter, it
// goes on at its end, as a live partial truncation does. Nothing read before
// the stop is delivered again, in neither case.
func TestResumeInAFileReplacedByACopy(t *testing.T) {
	for _, tc := range []struct {
		name    string
		keep    int // lines the copy keeps; -1: all of them
		inPlace bool
	}{
		{"identical copy, new inode", -1, false},
		{"identical copy, same inode", -1, true},
		{"older shorter copy, same inode", 60, true},
		{"older shorter copy, new inode", 60, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "server.log")
			store := NewPositionStore(filepath.Join(dir, "positions.json"))
			w := newLogWriter(t, path, 5)
			w.write(100)
			w.close()
			seq := &sequence{t: t, exact: true}
			stopAt(t, path, seq, store)
			keep := -1
			if tc.keep >= 0 {
				keep = 0
				for i := range tc.keep {
					keep += len(kafkaLine(i))
				}
			}
			replaceWithCopy(t, path, keep, tc.inPlace)
			w.create()
			defer w.close()
			if keep < 0 {
				// The broker writes on in the copy. (In a shorter one what
				// is written before the restart is after its end: lost, as
				// in a live partial truncation.)
				w.write(5)
			}
			var warned int
			saved, _, err := store.Load()
			if err != nil {
				t.Fatal(err)
			}
			p := saved[path]
			f := New(path, Options{LineTime: lineTime, Start: &p, Logger: slog.New(warnings{slog.DiscardHandler, &warned})})
			defer f.Close()
			mustPoll(t, f, seq.deliver) // exact: line 100 next, nothing again
			w.write(10)
			mustPoll(t, f, seq.deliver)
			st := f.Stats()
			if seq.next != w.next || st.ResumeMisses != 0 || st.Truncations != 0 || f.StartedOver() {
				t.Fatalf("want lines 100-%d after the restart and no start over, got up to %d, %+v", w.next-1, seq.next-1, st)
			}
			if shorter := tc.keep >= 0; shorter && (st.PartialTruncations != 1 || warned != 1) {
				t.Fatalf("a shorter copy: want one partial truncation and one warning, got %+v and %d warnings", st, warned)
			}
		})
	}
}

// A position file written before positions kept the last event's time
// still loads, the time as 0 (unknown); one that has it keeps it.
func TestPositionFileWithoutTheLastEventTimeLoads(t *testing.T) {
	old := `{"version":1,"positions":[{"path":"/var/log/kafka/server.log","dev":1,"inode":2,"offset":3,"head_len":3,"head_hash":4}]}`
	saved, problems, err := decodePositions([]byte(old))
	want := Position{Path: "/var/log/kafka/server.log", Dev: 1, Inode: 2, Offset: 3, HeadLen: 3, HeadHash: 4}
	if err != nil || len(problems) != 0 || saved[want.Path] != want {
		t.Fatalf("loaded %+v, %v, %v; want %+v", saved, problems, err, want)
	}
	dir := t.TempDir()
	store := NewPositionStore(filepath.Join(dir, "positions.json"))
	want.LastEvent = 1764496800123000000
	if err := store.Save([]Position{want}); err != nil {
		t.Fatal(err)
	}
	if saved, _, err = store.Load(); err != nil || saved[want.Path] != want {
		t.Fatalf("loaded %+v, %v; want %+v", saved, err, want)
	}
}
