package tail

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
)

// errNotRegular is the cause of every refusal to follow a path that is not a
// regular file.
var errNotRegular = errors.New("not a regular file")

// notRegularError says what the path is instead. A directory cannot be read
// as lines; a named pipe blocks the opener until a writer comes and a
// character device may never end, either of which would stall a poll.
type notRegularError struct {
	path string
	mode fs.FileMode
}

func (e *notRegularError) Error() string {
	what := "not a regular file"
	switch {
	case e.mode.IsDir():
		what = "a directory"
	case e.mode&fs.ModeNamedPipe != 0:
		what = `a named pipe (follow standard input with "-" instead)`
	case e.mode&fs.ModeCharDevice != 0:
		what = "a character device"
	case e.mode&fs.ModeDevice != 0:
		what = "a device"
	case e.mode&fs.ModeSocket != 0:
		what = "a socket"
	}
	return fmt.Sprintf("%s is %s, not a regular file", e.path, what)
}

func (e *notRegularError) Unwrap() error { return errNotRegular }

// OpenRegular opens path for reading if it is a regular file, without ever
// blocking on a named pipe, and refuses anything else (a directory, a pipe,
// a device such as /dev/zero that would never end) with an error saying what
// the path is. The offline commands use it so that they refuse what the
// follower refuses.
func OpenRegular(path string) (*os.File, os.FileInfo, error) { return openRegular(path) }
