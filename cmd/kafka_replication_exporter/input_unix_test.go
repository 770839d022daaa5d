//go:build unix

package main

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// verify and events refuse, before reading anything, a name that is not a
// regular file: a rotated name linking to a device that never ends
// (/dev/zero), an empty device, a named pipe (whose open would wait for a
// writer) and a directory. Each is one clear line and exit 2, as serve
// refuses them, and it comes at once.
func TestOfflineCommandsRefuseWhatIsNotARegularFile(t *testing.T) {
	dir := t.TempDir()
	live := filepath.Join(dir, "server.log")
	if err := os.WriteFile(live, []byte("[2025-10-16 15:57:12,614] DEBUG [Partition t-0 broker=1] High watermark updated from (offset=1, segment=[1:1]) to (offset=2, segment=[1:2]) (kafka.cluster.Partition)\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	zero, null, fifo := live+".1", live+".2", live+".3"
	if err := os.Symlink("/dev/zero", zero); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("/dev/null", null); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ path, what string }{
		{zero, "a character device"},
		{null, "a character device"},
		{fifo, "a named pipe"},
		{dir, "a directory"},
	} {
		for _, cmd := range []string{"verify", "events"} {
			t.Run(cmd+" "+filepath.Base(tc.path), func(t *testing.T) {
				type result struct {
					code      int
					out, errs string
				}
				done := make(chan result, 1)
				go func() {
					code, out, errOut := runCLI(t, "", cmd, live, tc.path)
					done <- result{code, out, errOut}
				}()
				var r result
				select {
				case r = <-done:
				case <-time.After(20 * time.Second):
					t.Fatalf("%s %s did not end", cmd, tc.path)
				}
				if r.code != exitUsage || !strings.Contains(r.errs, tc.path+" is "+tc.what) || strings.Count(r.errs, "\n") != 1 {
					t.Errorf("want exit 2 and one line saying %s is %s, got %d %q", tc.path, tc.what, r.code, r.errs)
				}
				if r.out != "" {
					t.Errorf("want nothing read before the refusal, got %q", r.out)
				}
			})
		}
	}
}
