package main

import (
	"bytes"
	"compress/gzip"
	"os"
	"testing"
	"time"
)

// writeFile writes a test's input file, failing the test if it cannot.
func writeFile(t testing.TB, path string, data []byte, perm os.FileMode) {
	t.Helper()
	if err := os.WriteFile(path, data, perm); err != nil {
		t.Fatal(err)
	}
}

// setMtime sets a test file's modification (and access) time.
func setMtime(t testing.TB, path string, mtime time.Time) {
	t.Helper()
	if err := os.Chtimes(path, mtime, mtime); err != nil {
		t.Fatal(err)
	}
}

// gzipped returns data compressed as a rotated .gz log file holds it.
func gzipped(t testing.TB, data []byte) []byte {
	t.Helper()
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	if _, err := zw.Write(data); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return gz.Bytes()
}
