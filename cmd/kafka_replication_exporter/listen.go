package main

import (
	"errors"
	"net"
	"os"
	"path/filepath"
	"strings"
)

// listenTCP opens a TCP listener on every address, so that their bound
// addresses (a port 0 resolved) are known before serving starts.
func listenTCP(addrs []string) ([]net.Listener, error) {
	var ls []net.Listener
	for _, a := range addrs {
		l, err := net.Listen("tcp", a)
		if err != nil {
			closeListeners(ls)
			return nil, err
		}
		ls = append(ls, l)
	}
	return ls, nil
}

func closeListeners(ls []net.Listener) {
	for _, l := range ls {
		l.Close()
	}
}

// writeAddressFile writes the listeners' addresses, one host:port a line,
// to path through a temporary file renamed into place, so that a reader
// never sees a partial file.
func writeAddressFile(path string, ls []net.Listener) error {
	var b strings.Builder
	for _, l := range ls {
		b.WriteString(l.Addr().String() + "\n")
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp*")
	if err != nil {
		return err
	}
	_, werr := tmp.WriteString(b.String())
	if err := errors.Join(werr, tmp.Chmod(0o644), tmp.Close()); err != nil {
		os.Remove(tmp.Name())
		return err
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		os.Remove(tmp.Name())
		return err
	}
	return nil
}
