package tail

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// Rolled files are the rotated copies of a followed file: Kafka's
// server.log.2025-10-16-14 (log4j2 time-based), server.log.3 (size-based,
// log4j2's default "max" index: higher = newer) and kubelet's
// 0.log.20251016-155712. Their names sort into time order when digit runs
// are compared as numbers. Compressed copies cannot be read as text and are
// left out, as are temporary files.

var unreadableSuffixes = []string{".gz", ".bz2", ".xz", ".zst", ".zip", ".lz4", ".tmp"}

type rolledFile struct {
	name string
	info os.FileInfo
}

// rolledNames lists the rolled siblings of path, oldest first.
func rolledNames(path string) []string {
	dir, base := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	var names []string
	for _, e := range entries {
		n := e.Name()
		if !strings.HasPrefix(n, base+".") || e.IsDir() || hasAnySuffix(n, unreadableSuffixes) {
			continue
		}
		names = append(names, filepath.Join(dir, n))
	}
	slices.SortFunc(names, naturalCompare)
	return names
}

// rolledAfter finds the rolled sibling that match reports as ours, searching
// from the newest (the usual case is the file rotated a moment ago), and
// returns it with every sibling rolled after it, oldest first. A sibling
// counts as "after" only if it also was last written no earlier than ours:
// that guards against numbering schemes where a bigger number is older
// (logrotate's server.log.1 = newest), which would otherwise make us read old
// files twice.
func rolledAfter(path string, match func(os.FileInfo) bool) (found rolledFile, newer []rolledFile, ok bool) {
	names := rolledNames(path)
	var stated []rolledFile // newest first
	for i := len(names) - 1; i >= 0; i-- {
		fi, err := os.Stat(names[i])
		if err != nil || !fi.Mode().IsRegular() {
			continue
		}
		rf := rolledFile{names[i], fi}
		if match(fi) {
			for j := len(stated) - 1; j >= 0; j-- {
				if !stated[j].info.ModTime().Before(fi.ModTime()) {
					newer = append(newer, stated[j])
				}
			}
			return rf, newer, true
		}
		stated = append(stated, rf)
	}
	return rolledFile{}, nil, false
}

func hasAnySuffix(s string, suffixes []string) bool {
	for _, suf := range suffixes {
		if strings.HasSuffix(s, suf) {
			return true
		}
	}
	return false
}

// naturalCompare orders strings with runs of digits compared by value, so
// that server.log.10 sorts after server.log.9.
func naturalCompare(a, b string) int {
	for a != "" && b != "" {
		if isDigit(a[0]) && isDigit(b[0]) {
			da, db := digitRun(a), digitRun(b)
			na, nb := strings.TrimLeft(a[:da], "0"), strings.TrimLeft(b[:db], "0")
			if len(na) != len(nb) {
				return len(na) - len(nb)
			}
			if c := strings.Compare(na, nb); c != 0 {
				return c
			}
			a, b = a[da:], b[db:]
			continue
		}
		if a[0] != b[0] {
			return int(a[0]) - int(b[0])
		}
		a, b = a[1:], b[1:]
	}
	return len(a) - len(b)
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

func digitRun(s string) int {
	i := 0
	for i < len(s) && isDigit(s[i]) {
		i++
	}
	return i
}
