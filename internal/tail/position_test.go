package tail

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A damaged entry never panics and never positions the follower anywhere
// but the beginning of the live file; the other entries keep their places.
func TestDamagedPositionEntries(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "server.log")
	var content strings.Builder
	for i := range 10 {
		content.WriteString(kafkaLine(i))
	}
	writeFile(t, path, content.String())
	live, _ := os.Stat(path)
	dev, ino := fileID(live)
	head := []byte(content.String())[:headSize]
	good := fmt.Sprintf(`{"path":%q,"dev":%d,"inode":%d,"offset":%d,"head_len":%d,"head_hash":%d}`,
		path, dev, ino, len(kafkaLine(0)), headSize, headHash(head))
	for name, entry := range map[string]string{
		"negative head_len":    strings.Replace(good, `"head_len":256`, `"head_len":-5`, 1),
		"huge head_len":        strings.Replace(good, `"head_len":256`, `"head_len":1099511627776`, 1),
		"negative offset":      strings.Replace(good, `"offset":`, `"offset":-`, 1),
		"offset as string":     strings.Replace(good, fmt.Sprintf(`"offset":%d`, len(kafkaLine(0))), `"offset":"7"`, 1),
		"head_len too short":   strings.Replace(good, `"head_len":256`, `"head_len":3`, 1),
		"empty head, bad hash": fmt.Sprintf(`{"path":%q,"dev":%d,"inode":%d,"offset":0,"head_len":0,"head_hash":1}`, path, dev, ino),
		"wrong head hash":      strings.Replace(good, fmt.Sprint(headHash(head)), "12345", 1),
		"offset past the end":  strings.Replace(good, fmt.Sprintf(`"offset":%d`, len(kafkaLine(0))), `"offset":9223372036854775807`, 1),
	} {
		t.Run(name, func(t *testing.T) {
			data := `{"version":1,"positions":[` + entry + `,{"path":"other.log","offset":0,"head_len":0,"head_hash":14695981039346656037},{"offset":3}]}`
			saved, problems, err := decodePositions([]byte(data))
			if err != nil {
				t.Fatalf("%s: %v", data, err)
			}
			if len(saved) != 2 || saved["other.log"].check() != nil {
				t.Fatalf("the intact entry was not kept, or the nameless one was: %+v", saved)
			}
			// A wrong hash or an offset past the end shows only against the
			// file, when the follower starts.
			atStart := name == "wrong head hash" || name == "offset past the end"
			if !atStart && (len(problems) != 1 || problems[0].Problem != DamagedEntry || problems[0].Path != path) {
				t.Fatalf("want one damaged entry for %s, got %+v", path, problems)
			}
			p := saved[path]
			seq := &sequence{t: t}
			f := New(path, Options{LineTime: lineTime, Start: &p})
			defer f.Close()
			mustPoll(t, f, seq.deliver)
			if name == "offset past the end" {
				// The file starts with the saved bytes: it is ours, cut
				// short, and goes on at its end.
				if st := f.Stats(); seq.seen != 0 || st.PartialTruncations != 1 || st.Offset != int64(len(content.String())) {
					t.Fatalf("want nothing read again and the follower at the end, got %d lines, %+v", seq.seen, st)
				}
				return
			}
			if seq.seen != 10 {
				t.Fatalf("delivered %d lines, want all 10 from the beginning", seq.seen)
			}
			if st := f.Stats(); st.ResumeMisses+st.Truncations != 1 {
				t.Fatalf("stats %+v", st)
			}
		})
	}
	// The intact entry resumes after the first line.
	saved, _, err := decodePositions([]byte(`{"version":1,"positions":[` + good + `]}`))
	if err != nil {
		t.Fatal(err)
	}
	p := saved[path]
	seq := &sequence{t: t, exact: true, next: 1}
	f := New(path, Options{LineTime: lineTime, Start: &p})
	defer f.Close()
	mustPoll(t, f, seq.deliver)
	if seq.seen != 9 {
		t.Fatalf("intact entry: delivered %d lines, want 9", seq.seen)
	}
}

// FuzzPosition feeds arbitrary position files to the decoder and every
// decoded entry to a follower over a live and a rolled file. Inodes 1 and 2
// stand for the live and the rolled file, so that the fuzzer reaches the
// paths that trust a matching entry. Nothing may panic, and no entry may
// start the follower outside the file it starts in.
func FuzzPosition(f *testing.F) {
	dir := f.TempDir()
	path := filepath.Join(dir, "server.log")
	var rolled, live strings.Builder
	for i := range 20 {
		rolled.WriteString(kafkaLine(i))
		live.WriteString(kafkaLine(20 + i))
	}
	if err := os.WriteFile(path+".1", []byte(rolled.String()), 0o644); err != nil {
		f.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(live.String()), 0o644); err != nil {
		f.Fatal(err)
	}
	inodes := map[uint64]string{1: path, 2: path + ".1"}
	ids := map[uint64][2]uint64{}
	for k, name := range inodes {
		fi, err := os.Stat(name)
		if err != nil {
			f.Fatal(err)
		}
		dev, ino := fileID(fi)
		ids[k] = [2]uint64{dev, ino}
	}
	hash := func(s string) uint64 { return headHash([]byte(s)[:headSize]) }
	entry := func(inode uint64, offset, headLen int, headHash uint64) string {
		return fmt.Sprintf(`{"version":1,"positions":[{"path":%q,"dev":0,"inode":%d,"offset":%d,"head_len":%d,"head_hash":%d}]}`,
			path, inode, offset, headLen, headHash)
	}
	f.Add([]byte(entry(1, 300, headSize, hash(live.String()))))
	f.Add([]byte(entry(2, 300, headSize, hash(rolled.String()))))
	f.Add([]byte(entry(2, 1<<40, headSize, hash(rolled.String()))))
	f.Add([]byte(entry(1, 300, -5, 0)))
	f.Add([]byte(entry(1, -300, 0, 0)))
	f.Add([]byte(`{"version":1,"positions":[{"path":"` + path + `","offset":"x"}]}`))
	f.Add([]byte(`{"version":1,"positions":[{"path":7}]}`))
	f.Add([]byte(`{"version":1,"positions":null}`))
	f.Add([]byte(`{"version":2}`))
	f.Add([]byte(`[`))
	f.Fuzz(func(t *testing.T, data []byte) {
		saved, _, err := decodePositions(data)
		if err != nil {
			return
		}
		for _, p := range saved {
			if id, ok := ids[p.Inode]; ok {
				p.Dev, p.Inode = id[0], id[1]
			}
			p.Path = path // every entry is tried against the files
			fl := New(path, Options{LineTime: lineTime, Start: &p})
			if err := fl.openLive(); err != nil {
				t.Fatalf("start: %v", err)
			}
			if fl.cur != nil && (fl.offset < 0 || fl.offset > fl.curInfo.Size()) {
				t.Fatalf("%+v starts at %d in a file of %d bytes", p, fl.offset, fl.curInfo.Size())
			}
			for _, q := range fl.backlog {
				if q.from < 0 || q.from > q.info.Size() {
					t.Fatalf("%+v starts at %d in %s of %d bytes", p, q.from, q.f.Name(), q.info.Size())
				}
			}
			if err := fl.Poll(func([]byte) {}); err != nil {
				t.Fatalf("poll: %v", err)
			}
			fl.Close()
		}
	})
}

// logBuffer is a logger that keeps what it logs, for tests.
func logBuffer() (*slog.Logger, *strings.Builder) {
	var b strings.Builder
	return slog.New(slog.NewTextHandler(&b, nil)), &b
}

// An empty or torn position file is treated as a damaged entry is: a
// warning, no positions (every follower starts as if none was saved), a
// count; it no longer stops the exporter. What is not a position file at
// all, or of another version, is still an error: Save would overwrite it.
func TestEmptyOrTornPositionFile(t *testing.T) {
	good := `{"version":1,"positions":[{"path":"/var/log/kafka/server.log","dev":1,"inode":2,"offset":0,"head_len":0,"head_hash":14695981039346656037}]}`
	for name, tc := range map[string]struct {
		data string
		want LoadProblemKind
	}{
		"empty":                 {"", EmptyFile},
		"blank":                 {" \n", EmptyFile},
		"zero-filled":           {strings.Repeat("\x00", 4096), EmptyFile},
		"cut short":             {good[:len(good)/2], TornFile},
		"cut after the version": {`{"version":1,`, TornFile},
		"zeros after a start":   {good[:40] + strings.Repeat("\x00", 100), TornFile},
		"garbled":               {strings.Replace(good, `":`, `"#`, 1), TornFile},
	} {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "positions.json")
			writeFile(t, path, tc.data)
			logger, logged := logBuffer()
			store := NewPositionStore(path).WithLogger(logger)
			saved, problems, err := store.Load()
			if err != nil {
				t.Fatalf("want no error, got %v", err)
			}
			if len(saved) != 0 || len(problems) != 1 || problems[0].Problem != tc.want || problems[0].Path != "" {
				t.Fatalf("want no positions and one %s problem, got %v, %+v", tc.want, saved, problems)
			}
			if st := store.Stats(); st.LoadProblems[tc.want] != 1 {
				t.Errorf("want the problem counted, got %+v", st)
			}
			if !strings.Contains(logged.String(), "level=WARN") || !strings.Contains(logged.String(), tc.want.String()) {
				t.Errorf("want a warning naming %s, got %q", tc.want, logged)
			}
			// The next save replaces it.
			if err := store.Save([]Position{{Path: "a", HeadHash: headHash(nil)}}); err != nil {
				t.Fatal(err)
			}
			if saved, problems, err := store.Load(); err != nil || len(saved) != 1 || len(problems) != 0 {
				t.Fatalf("after a save: %v, %+v, %v", saved, problems, err)
			}
		})
	}
	for name, data := range map[string]string{
		"a log file":      "[2025-10-16 15:57:12,614] INFO x (kafka.server.KafkaServer)\n",
		"a JSON array":    `[1,2]`,
		"another version": `{"version":2,"positions":[]}`,
		"no version":      `{"positions":[]}`,
	} {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "positions.json")
			writeFile(t, path, data)
			if _, _, err := NewPositionStore(path).Load(); err == nil {
				t.Errorf("want %q refused", data)
			}
		})
	}
}

// One process at a time: the second Lock on a position file fails with
// ErrPositionFileInUse naming the holder, until the first is closed.
func TestPositionFileLock(t *testing.T) {
	path := filepath.Join(t.TempDir(), "positions.json")
	first := NewPositionStore(path)
	if err := first.Lock(); err != nil {
		t.Fatal(err)
	}
	second := NewPositionStore(path)
	err := second.Lock()
	if !errors.Is(err, ErrPositionFileInUse) || !strings.Contains(err.Error(), fmt.Sprintf("pid %d", os.Getpid())) {
		t.Fatalf("want ErrPositionFileInUse naming pid %d, got %v", os.Getpid(), err)
	}
	if err := first.Close(); err != nil {
		t.Fatal(err)
	}
	if err := second.Lock(); err != nil {
		t.Fatalf("want the lock free after Close, got %v", err)
	}
	second.Close()
}

// A failed save is counted at every attempt and logged once when saving
// starts failing and once when it works again.
func TestPositionSaveErrors(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "gone")
	logger, logged := logBuffer()
	store := NewPositionStore(filepath.Join(dir, "positions.json")).WithLogger(logger)
	ps := []Position{{Path: "a", HeadHash: headHash(nil)}}
	for range 3 {
		if err := store.Save(ps); err == nil {
			t.Fatal("want the save into a missing directory to fail")
		}
	}
	if st := store.Stats(); st.SaveErrors != 3 || st.Saving {
		t.Errorf("want 3 save errors and saving false, got %+v", st)
	}
	if n := strings.Count(logged.String(), "level=WARN"); n != 1 {
		t.Errorf("want one warning for three failures, got %d:\n%s", n, logged)
	}
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := store.Save(ps); err != nil {
		t.Fatal(err)
	}
	if st := store.Stats(); st.SaveErrors != 3 || !st.Saving {
		t.Errorf("want saving true again, got %+v", st)
	}
	if !strings.Contains(logged.String(), "works again") {
		t.Errorf("want the recovery logged, got\n%s", logged)
	}
}
