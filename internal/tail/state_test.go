package tail

import (
	"context"
	"errors"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// warnings counts the WARN records a follower logs.
type warnings struct {
	slog.Handler
	n *int
}

func (w warnings) Handle(ctx context.Context, r slog.Record) error {
	if r.Level == slog.LevelWarn {
		*w.n++
	}
	return nil
}
func (w warnings) Enabled(context.Context, slog.Level) bool { return true }
func (w warnings) WithAttrs([]slog.Attr) slog.Handler       { return w }

// pollState polls n times and checks what Stats say afterwards.
func pollState(t *testing.T, f *Follower, deliver func([]byte), n int, reason string) Stats {
	t.Helper()
	for range n {
		err := f.Poll(deliver)
		if got := reasonFor(err); got != reason {
			t.Fatalf("Poll = %v (%q), want reason %q", err, got, reason)
		}
	}
	st := f.Stats()
	if st.Reason != reason || st.Ready != (reason == "") {
		t.Fatalf("want reason %q, got %+v", reason, st)
	}
	return st
}

// The log path replaced by a directory, then by a file again. The
// change is reported once (a warning, Reason, an error count, not Ready),
// lines still written to the old file are read, and the new file is read
// from its beginning once it is there.
func TestPathReplacedByADirectoryThenAFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "server.log")
	writeFile(t, path, "a\n")
	var warned int
	var got lines
	f := New(path, Options{LineTime: lineTime, FromBeginning: true, Logger: slog.New(warnings{slog.DiscardHandler, &warned})})
	defer f.Close()
	pollState(t, f, got.deliver, 1, "")

	old, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer old.Close()
	os.Remove(path)
	if err := os.Mkdir(path, 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := old.WriteString("b\n"); err != nil { // the writer still had the old file open
		t.Fatal(err)
	}
	st := pollState(t, f, got.deliver, 5, ReasonNotRegularFile)
	if st.Errors[ReasonNotRegularFile] != 1 || warned != 1 {
		t.Fatalf("five polls of a directory: %d warnings, errors %v", warned, st.Errors)
	}
	equal(t, "from the old file", got.take(), []string{"a", "b"})

	os.Remove(path)
	writeFile(t, path, "c\n")
	pollState(t, f, got.deliver, 1, "")
	equal(t, "from the new file", got.take(), []string{"c"})
	if warned != 1 {
		t.Fatalf("%d warnings", warned)
	}
}

// A directory at the path from the start, then missing, then a file.
func TestPathMissingOrADirectoryAtStart(t *testing.T) {
	path := filepath.Join(t.TempDir(), "server.log")
	if err := os.Mkdir(path, 0o755); err != nil {
		t.Fatal(err)
	}
	var got lines
	f := New(path, Options{LineTime: lineTime})
	defer f.Close()
	pollState(t, f, got.deliver, 3, ReasonNotRegularFile)
	os.Remove(path)
	pollState(t, f, got.deliver, 3, ReasonNotFound)
	writeFile(t, path, "a\n")
	st := pollState(t, f, got.deliver, 1, "")
	// A file that appeared after we started is read from its beginning.
	equal(t, "lines", got.take(), []string{"a"})
	if st.Errors[ReasonNotRegularFile] != 1 || st.Errors[ReasonNotFound] != 1 {
		t.Fatalf("errors %v", st.Errors)
	}
}

// A named pipe or a device given as the log file is refused at once: the
// open of a named pipe would wait for a writer, a device may never end.
func TestNamedPipeAndDeviceAreRefusedWithoutBlocking(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "server.log")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Skip("no named pipes here:", err)
	}
	for _, path := range []string{fifo, "/dev/zero"} {
		if _, err := os.Stat(path); err != nil {
			continue
		}
		f := New(path, Options{LineTime: lineTime, FromBeginning: true})
		done := make(chan error, 1)
		go func() { done <- f.Poll(func([]byte) {}) }()
		select {
		case err := <-done:
			if reasonFor(err) != ReasonNotRegularFile || !strings.Contains(err.Error(), "not a regular file") {
				t.Errorf("%s: Poll = %v", path, err)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("%s: Poll blocked", path)
		}
		f.Close()
	}
	// Resuming from a saved position must not block either.
	p := Position{Path: fifo, HeadHash: headHash(nil)}
	f := New(fifo, Options{LineTime: lineTime, Start: &p})
	defer f.Close()
	if err := f.Poll(func([]byte) {}); reasonFor(err) != ReasonNotRegularFile {
		t.Fatalf("resume on a named pipe: %v", err)
	}
}

// Permission denied is its own reason; the file is read once it may be.
func TestPermissionDeniedRecovers(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Skip("root reads files whatever their mode")
	}
	path := filepath.Join(t.TempDir(), "server.log")
	writeFile(t, path, "a\n")
	if err := os.Chmod(path, 0); err != nil {
		t.Fatal(err)
	}
	var got lines
	f := New(path, Options{LineTime: lineTime, FromBeginning: true})
	defer f.Close()
	pollState(t, f, got.deliver, 2, ReasonPermissionDenied)
	if err := os.Chmod(path, 0o644); err != nil {
		t.Fatal(err)
	}
	pollState(t, f, got.deliver, 1, "")
	equal(t, "lines", got.take(), []string{"a"})
}

func TestReasonFor(t *testing.T) {
	for err, want := range map[error]string{
		nil: "",
		&fs.PathError{Op: "open", Err: syscall.ENOENT}:    ReasonNotFound,
		&fs.PathError{Op: "open", Err: syscall.EACCES}:    ReasonPermissionDenied,
		&fs.PathError{Op: "open", Err: syscall.EPERM}:     ReasonPermissionDenied,
		&notRegularError{"x", fs.ModeDir}:                 ReasonNotRegularFile,
		&fs.PathError{Op: "read", Err: syscall.EIO}:       ReasonReadError,
		errors.New("read server.log: input/output error"): ReasonReadError,
		ErrClosed: "",
	} {
		if got := reasonFor(err); got != want {
			t.Errorf("reasonFor(%v) = %q, want %q", err, got, want)
		}
	}
}

// A file deleted and never created again is missing, not healthy: after the
// grace a rotation's create gets, it is reported not_found (so that
// kafka_replication_log_file_open is 0 and KafkaReplicationExporterLogFileMissing
// can fire), what the writer still appended to the deleted file is read, and
// the descriptor is closed so that the deleted file's space is freed.
func TestDeletedFileIsReportedMissingAndClosed(t *testing.T) {
	path := filepath.Join(t.TempDir(), "server.log")
	w := newLogWriter(t, path, 6)
	defer w.close()
	w.write(10)
	seq := &sequence{t: t, exact: true}
	f := New(path, Options{LineTime: lineTime, FromBeginning: true})
	defer f.Close()
	pollState(t, f, seq.deliver, 1, "")
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	pollState(t, f, seq.deliver, 1, "") // within the grace: a rotation's create may follow
	w.write(5)                          // the writer still has the deleted file open
	time.Sleep(missingGrace + 100*time.Millisecond)
	st := pollState(t, f, seq.deliver, 1, ReasonNotFound)
	if seq.next != 15 || st.Errors[ReasonNotFound] != 1 {
		t.Fatalf("want the deleted file read to its end (15 lines), got up to %d; %+v", seq.next-1, st)
	}
	if f.cur != nil {
		t.Fatal("the deleted file is still open")
	}
	pollState(t, f, seq.deliver, 2, ReasonNotFound)
	// Created again: read from its beginning, healthy again.
	w.close()
	w.create()
	w.write(3)
	pollState(t, f, seq.deliver, 1, "")
	if seq.next != 18 {
		t.Fatalf("want the new file's 3 lines, got up to %d", seq.next-1)
	}
}
