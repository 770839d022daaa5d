package logparse

// Container runtimes wrap each physical line in an envelope: Kubernetes CRI,
// `docker logs --timestamps`, `docker compose` service prefixes. The Splitter
// strips it from every line, header or continuation, so the Parser only ever
// sees the broker's own text.

// criTag is the Kubernetes CRI log tag: F = full line, P = partial chunk.
type criTag uint8

const (
	criNone criTag = iota
	criFull
	criPartial
)

// stripEnvelope removes a docker compose "name | " prefix, then a CRI
// "<RFC3339Nano> stdout|stderr F|P " or `docker logs --timestamps`
// "<RFC3339Nano> " prefix. source is the compose service name (nil when the
// line has none): merged output interleaves the lines of several brokers,
// and a continuation line belongs to the record of its own source.
func stripEnvelope(line []byte) (body []byte, tag criTag, source []byte) {
	if len(line) == 0 || line[0] == '[' || line[0] == '\t' || line[0] == ' ' {
		return line, criNone, nil // fast path: the broker's own layouts
	}
	line, source = stripCompose(line)
	body, tag = stripRuntime(line)
	return body, tag, source
}

// stripRuntime removes a CRI or `docker logs --timestamps` prefix.
func stripRuntime(line []byte) ([]byte, criTag) {
	n := isoTSLen(line)
	if n == 0 || n >= len(line) || line[n] != ' ' {
		return line, criNone
	}
	rest := line[n+1:]
	if len(rest) >= 9 && (string(rest[:7]) == "stdout " || string(rest[:7]) == "stderr ") && rest[8] == ' ' {
		switch rest[7] {
		case 'F':
			return rest[9:], criFull
		case 'P':
			return rest[9:], criPartial
		}
	}
	if len(rest) > 0 && rest[0] == ' ' {
		return line, criNone // Spring Boot pads the level: "…Z  INFO 4242 ---"
	}
	if _, ln := level(rest); ln > 0 {
		return line, criNone // Spring Boot with a 5-letter level: "…Z ERROR 4242 ---"
	}
	if len(rest) == 8 && string(rest[:7]) == "stdout " || len(rest) == 8 && string(rest[:7]) == "stderr " {
		return nil, criFull // CRI line with an empty message
	}
	return rest, criNone // docker logs --timestamps
}

// stripCompose removes a `docker compose` service prefix: a name, space
// padding, then "| " ("kafka-1   | [2025-…"). It returns the rest of the
// line and the name without its padding (nil when there is no prefix).
func stripCompose(line []byte) (rest, name []byte) {
	i := 0
	for i < len(line) && i < 128 && isNameByte(line[i]) {
		i++
	}
	if i == 0 {
		return line, nil
	}
	j := i
	for j < len(line) && line[j] == ' ' {
		j++
	}
	if j >= len(line) || line[j] != '|' {
		return line, nil
	}
	j++
	if j < len(line) && line[j] == ' ' {
		j++
	}
	return line[j:], line[:i]
}

func isNameByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '.'
}

// esc starts an ANSI escape sequence.
const esc = 0x1b

// stripANSI appends line to dst without its ANSI escape sequences — CSI
// "ESC [ parameters final-byte", as a console appender's %highlight or
// %style prints colors — and without any other lone ESC.
func stripANSI(dst, line []byte) []byte {
	for i := 0; i < len(line); i++ {
		c := line[i]
		if c != esc {
			dst = append(dst, c)
			continue
		}
		if i+1 < len(line) && line[i+1] == '[' {
			j := i + 2
			for j < len(line) && (line[j] < 0x40 || line[j] > 0x7e) {
				j++
			}
			i = j // the final byte, or the end of a cut sequence
		}
	}
	return dst
}
