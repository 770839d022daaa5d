//go:build !unix

package main

import "os"

// mapFile is not available here: files are read with read(2).
func mapFile(*os.File, int64) ([]byte, func(), bool) { return nil, nil, false }
