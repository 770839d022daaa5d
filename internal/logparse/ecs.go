package logparse

import (
	"bytes"
	"encoding/json"
	"strings"
)

// log4j2's EcsLayout writes each record as one JSON object (Elastic Common
// Schema): JsonTemplateLayout's EcsLayout.json and ecs-logging-java's
// EcsLayout both use these flat, dotted field names.
type ecsRecord struct {
	Timestamp  string `json:"@timestamp"`
	Level      string `json:"log.level"`
	Logger     string `json:"log.logger"`
	Message    string `json:"message"`
	ErrorType  string `json:"error.type"`
	ErrorMsg   string `json:"error.message"`
	StackTrace string `json:"error.stack_trace"`
}

// ecsLine rewrites an EcsLayout record as the header line Kafka's own layout
// would have printed, "<@timestamp> LEVEL <message> (<logger>)" (a layout
// splitHeaderAny reads), and its continuation: the message's further lines,
// then "<error.type>: <error.message>" or the stack trace, as log4j prints a
// throwable. ok is false for a line that is no EcsLayout record.
func ecsLine(first, cont, line []byte) (newFirst, newCont []byte, ok bool) {
	if len(line) < 2 || line[0] != '{' || !bytes.Contains(line, []byte(`"@timestamp"`)) {
		return first, cont, false
	}
	var r ecsRecord
	if json.Unmarshal(line, &r) != nil || isoTSLen([]byte(r.Timestamp)) == 0 || r.Level == "" {
		return first, cont, false
	}
	msg, rest, multi := strings.Cut(r.Message, "\n")
	first = append(first[:0], r.Timestamp...)
	first = append(first, ' ')
	first = append(first, bytes.TrimSpace([]byte(r.Level))...)
	first = append(first, ' ')
	first = append(first, msg...)
	if r.Logger != "" {
		first = append(append(append(first, " ("...), r.Logger...), ')')
	}
	cont = cont[:0]
	if multi {
		cont = append(cont, rest...)
	}
	exc := r.StackTrace
	if exc == "" && r.ErrorType != "" {
		exc = r.ErrorType
		if r.ErrorMsg != "" {
			exc += ": " + r.ErrorMsg
		}
	}
	if exc = strings.TrimRight(exc, "\r\n"); exc != "" {
		if len(cont) > 0 {
			cont = append(cont, '\n')
		}
		cont = append(cont, exc...)
	}
	return first, cont, true
}
