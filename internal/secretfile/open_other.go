//go:build !unix

package secretfile

import "os"

// openRegular opens path for reading if it is a regular file.
func openRegular(path string) (*os.File, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	if err := statRegular(f, path); err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}
