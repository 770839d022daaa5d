package tail

import (
	"bufio"
	"bytes"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Rolled files are the rotated copies of a followed file: Kafka's
// server.log.2025-10-16-14 (daily/hourly), server.log.3 (size-based) and
// kubelet's 0.log.20251016-155712. Numbered names mean opposite things to
// different writers: log4j 1.x (Kafka 3.x with reload4j), logrotate and
// log4j2 with fileIndex="min" make .1 the newest, log4j2's default
// (fileIndex="max", Kafka 4.x) makes .1 the oldest. So the order is decided
// from the files themselves, by orderRolled, which both the follower and
// `verify` use. Compressed copies cannot be followed and are left out, as are
// temporary files.

var unreadableSuffixes = []string{".gz", ".bz2", ".xz", ".zst", ".zip", ".lz4", ".tmp"}

// sameMtime is how close two modification times must be to say nothing about
// which file was written last: filesystems with one-second timestamps, and
// copies or restores that stamp every file in one go.
const sameMtime = time.Second

// firstLineSearch is how much of a file's beginning is searched for the first
// line that carries a timestamp.
const firstLineSearch = 4 << 10

type rolledFile struct {
	name string
	info os.FileInfo
	// open reads the file's content; nil means os.Open. verify passes one
	// that decompresses.
	open func(string) (io.ReadCloser, error)

	firstTime  time.Time // timestamp of the first log line, zero if unknown
	firstKnown bool      // firstTime was looked for
}

// rolledNames lists the rolled siblings of path, in name order.
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

// rolledSiblings stats the rolled siblings of path and returns the regular
// files among them, oldest first.
func rolledSiblings(path string) []*rolledFile {
	var files []*rolledFile
	for _, name := range rolledNames(path) {
		fi, err := os.Stat(name)
		if err != nil || !fi.Mode().IsRegular() {
			continue
		}
		files = append(files, &rolledFile{name: name, info: fi})
	}
	orderRolled(path, files)
	return files
}

// rolledAfter finds the rolled sibling of path that match reports as ours
// and returns it with every sibling written after it, oldest first.
func rolledAfter(path string, match func(os.FileInfo) bool) (found *rolledFile, newer []*rolledFile, ok bool) {
	files := rolledSiblings(path)
	for i, rf := range files {
		if match(rf.info) {
			return rf, files[i+1:], true
		}
	}
	return nil, nil, false
}

// SortRolled sorts names, rotated copies of the log file at base
// (server.log.1, server.log.2025-10-16-14, ...), oldest first, the way the
// follower orders them when it resumes. open reads a file's content (verify
// passes one that decompresses); nil means os.Open. A file that cannot be
// read sorts by its name alone.
func SortRolled(base string, names []string, open func(string) (io.ReadCloser, error)) {
	files := make([]*rolledFile, len(names))
	for i, name := range names {
		files[i] = &rolledFile{name: name, open: open}
		if fi, err := os.Stat(name); err == nil {
			files[i].info = fi
		}
	}
	orderRolled(base, files)
	for i, rf := range files {
		names[i] = rf.name
	}
}

// orderRolled sorts the rolled copies of base oldest first. Names that carry
// a date or a timestamp (server.log.2025-10-16-14, 0.log.20251016-155712)
// sort as they read: the roller wrote them once, while a copy or a restore
// can change every mtime. When plain numbers are among the names, the
// evidence, in the order it is trusted, is:
//
//  1. modification time: a rolled file is not written after it rolls, so
//     the file rolled last was written last;
//  2. among files whose mtimes are within sameMtime of each other, the
//     timestamp of their first log line (log4j's [yyyy-MM-dd HH:mm:ss,SSS],
//     or the RFC 3339 time of a container runtime's line);
//  3. then the names: a plain number follows the convention the other
//     files show (pairs told apart by 1 or 2), or log4j 1.x's (.1 newest)
//     when nothing shows one; dated names come before numbered ones.
func orderRolled(base string, files []*rolledFile) {
	slices.SortStableFunc(files, func(a, b *rolledFile) int { return naturalCompare(a.name, b.name) })
	if !slices.ContainsFunc(files, func(rf *rolledFile) bool { _, numbered := rolledIndex(base, rf.name); return numbered }) {
		return
	}
	slices.SortStableFunc(files, func(a, b *rolledFile) int { return modTime(a).Compare(modTime(b)) })

	// Groups of files whose mtimes do not tell them apart: chains of
	// neighbours closer than sameMtime.
	var groups [][]*rolledFile
	for i, start := 1, 0; i <= len(files); i++ {
		if i == len(files) || modTime(files[i]).Sub(modTime(files[i-1])) >= sameMtime {
			groups = append(groups, files[start:i])
			start = i
		}
	}
	for _, g := range groups {
		if len(g) > 1 {
			for _, rf := range g {
				rf.readFirstTime()
			}
		}
	}
	newestIsOne := numberingNewestIsOne(base, groups)
	for _, g := range groups {
		if len(g) < 2 {
			continue
		}
		byContent := true
		for _, rf := range g {
			byContent = byContent && !rf.firstTime.IsZero()
		}
		slices.SortStableFunc(g, func(a, b *rolledFile) int {
			if byContent {
				if c := a.firstTime.Compare(b.firstTime); c != 0 {
					return c
				}
			}
			return compareRolledNames(base, a.name, b.name, newestIsOne)
		})
	}
}

// numberingNewestIsOne decides which way plain numbers run, from the pairs
// of numbered files whose mtimes (different groups) or first lines tell
// which is newer. Without such a pair it is log4j 1.x's convention, also
// logrotate's and log4j2's with fileIndex="min".
func numberingNewestIsOne(base string, groups [][]*rolledFile) bool {
	type numbered struct {
		n     int
		group int
		first time.Time
	}
	var ns []numbered
	for gi, g := range groups {
		for _, rf := range g {
			if n, ok := rolledIndex(base, rf.name); ok {
				ns = append(ns, numbered{n, gi, rf.firstTime})
			}
		}
	}
	votes := 0 // > 0: a higher number is newer
	for i := range ns {
		for j := i + 1; j < len(ns); j++ {
			a, b := ns[i], ns[j]
			if a.n == b.n {
				continue
			}
			older := 0 // -1: a is older, +1: b is older
			switch {
			case a.group != b.group:
				older = -1 // groups are in mtime order and i < j
			case !a.first.IsZero() && !b.first.IsZero() && !a.first.Equal(b.first):
				older = 1
				if a.first.Before(b.first) {
					older = -1
				}
			}
			if older == 0 {
				continue
			}
			if (a.n < b.n) == (older < 0) {
				votes++
			} else {
				votes--
			}
		}
	}
	return votes <= 0
}

// compareRolledNames orders two rolled names oldest first by their suffixes:
// plain numbers by the numbering convention, anything else (dates,
// timestamps) as it reads, with dated names before numbered ones.
func compareRolledNames(base, a, b string, newestIsOne bool) int {
	na, aok := rolledIndex(base, a)
	nb, bok := rolledIndex(base, b)
	switch {
	case aok && bok:
		if newestIsOne {
			return nb - na
		}
		return na - nb
	case aok:
		return 1
	case bok:
		return -1
	}
	return naturalCompare(a, b)
}

// rolledIndex returns the number of a size-rolled name (server.log.3,
// server.log.3.gz). Longer digit runs are dates (server.log.20251016).
func rolledIndex(base, name string) (int, bool) {
	suffix, ok := strings.CutPrefix(filepath.Base(name), filepath.Base(base)+".")
	if !ok {
		return 0, false
	}
	for _, ext := range unreadableSuffixes {
		suffix = strings.TrimSuffix(suffix, ext)
	}
	if len(suffix) == 0 || len(suffix) > 6 || digitRun(suffix) != len(suffix) {
		return 0, false
	}
	n, err := strconv.Atoi(suffix)
	return n, err == nil
}

func modTime(rf *rolledFile) time.Time {
	if rf.info == nil {
		return time.Time{}
	}
	return rf.info.ModTime()
}

// readFirstTime looks for the timestamp of the file's first log line.
func (rf *rolledFile) readFirstTime() {
	if rf.firstKnown {
		return
	}
	rf.firstKnown = true
	open := rf.open
	if open == nil {
		open = func(name string) (io.ReadCloser, error) {
			f, _, err := openRegular(name)
			return f, err
		}
	}
	r, err := open(rf.name)
	if err != nil {
		return
	}
	defer r.Close()
	head, _ := io.ReadAll(io.LimitReader(r, firstLineSearch))
	rf.firstTime = firstLineTime(head)
}

// firstLineTime returns the timestamp at the start of the first line of head
// that has one: a rolled file can begin with the rest of a stack trace.
func firstLineTime(head []byte) time.Time {
	sc := bufio.NewScanner(bytes.NewReader(head))
	for sc.Scan() {
		if t, ok := lineTime(sc.Bytes()); ok {
			return t
		}
	}
	return time.Time{}
}

// lineTime parses the timestamp a log line starts with: log4j's
// "[2025-10-16 15:57:12,614]" or a container runtime's RFC 3339 time. Both
// sides of a comparison come from the same writer, so the zone does not
// matter.
func lineTime(line []byte) (time.Time, bool) {
	const log4j = "[2006-01-02 15:04:05,000]"
	if len(line) >= len(log4j) && line[0] == '[' {
		t, err := time.Parse(log4j, string(line[:len(log4j)]))
		return t, err == nil
	}
	if i := bytes.IndexByte(line, ' '); i > 0 {
		t, err := time.Parse(time.RFC3339Nano, string(line[:i]))
		return t, err == nil
	}
	return time.Time{}, false
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
