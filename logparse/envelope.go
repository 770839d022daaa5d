package logparse

// Container runtimes wrap each physical line in an envelope (catalog §2.4,
// §2.5). The Splitter strips it from every line, header or continuation,
// so the Parser only ever sees the broker's own text.

// criTag is the Kubernetes CRI log tag: F = full line, P = partial chunk.
type criTag uint8

const (
	criNone criTag = iota
	criFull
	criPartial
)

// stripEnvelope removes a docker compose "name | " prefix, then a CRI
// "<RFC3339Nano> stdout|stderr F|P " or `docker logs --timestamps`
// "<RFC3339Nano> " prefix.
func stripEnvelope(line []byte) ([]byte, criTag) {
	if len(line) == 0 || line[0] == '[' || line[0] == '\t' || line[0] == ' ' {
		return line, criNone // fast path: the broker's own layouts
	}
	line = stripCompose(line)
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
// padding, then "| " ("kafka-1   | [2025-…").
func stripCompose(line []byte) []byte {
	i := 0
	for i < len(line) && i < 128 && isNameByte(line[i]) {
		i++
	}
	if i == 0 {
		return line
	}
	j := i
	for j < len(line) && line[j] == ' ' {
		j++
	}
	if j >= len(line) || line[j] != '|' {
		return line
	}
	j++
	if j < len(line) && line[j] == ' ' {
		j++
	}
	return line[j:]
}

func isNameByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '.'
}
