//go:build unix

package secretfile

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestRead(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, b []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, b, 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	exact := write("exact", []byte(strings.Repeat("x", 1024)))
	over := write("over", []byte(strings.Repeat("x", 1025)))
	sparse := filepath.Join(dir, "sparse")
	if f, err := os.Create(sparse); err != nil {
		t.Fatal(err)
	} else {
		if err := f.Truncate(256 << 20); err != nil {
			t.Fatal(err)
		}
		f.Close()
	}
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		path, want string
	}{
		{exact, ""},
		{over, over + " is larger than 1 KiB"},
		{sparse, sparse + " is larger than 1 KiB"},
		{fifo, fifo + " is a named pipe, want a regular file"},
		{dir, dir + " is a directory"},
		{"/dev/zero", "/dev/zero is a character device"},
		{filepath.Join(dir, "missing"), "no such file"},
	} {
		done := make(chan struct{})
		var b []byte
		var err error
		go func() { defer close(done); b, err = Read(tc.path, 1024) }()
		select {
		case <-done:
		case <-time.After(2 * time.Second):
			t.Fatalf("%s: Read still blocked after 2s", tc.path)
		}
		switch {
		case tc.want == "" && (err != nil || len(b) != 1024):
			t.Errorf("%s: %d bytes, %v; want 1024", tc.path, len(b), err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%s: err %v, want %q", tc.path, err, tc.want)
		}
	}
}
