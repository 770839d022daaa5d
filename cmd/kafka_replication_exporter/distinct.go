package main

import (
	"fmt"
	"os"
	"path/filepath"
)

// distinctFiles refuses a log file given twice, by the same path or by
// another name for it (a symlink, a hard link, a bind mount): followed twice,
// every event would count twice and the invariant checker see each line
// repeated. A file not there yet can only be compared by its path.
func distinctFiles(paths []string) error {
	type seen struct {
		path string
		fi   os.FileInfo
	}
	var files []seen
	for _, p := range paths {
		if p == "-" {
			continue
		}
		fi, _ := os.Stat(p)
		for _, s := range files {
			if filepath.Clean(s.path) == filepath.Clean(p) {
				return fmt.Errorf("--log.file %s is given twice", p)
			}
			if fi != nil && s.fi != nil && os.SameFile(fi, s.fi) {
				return fmt.Errorf("--log.file %s and %s are the same file", s.path, p)
			}
		}
		files = append(files, seen{p, fi})
	}
	return nil
}
