package stack

import (
	"fmt"
	"os"
	"regexp"
	"strconv"
	"time"

	"github.com/prometheus/common/model"
	"go.yaml.in/yaml/v3"
)

// ScaleRules returns a copy of a Prometheus rule file with every duration
// divided by factor, never below floor: each rule's `for:` and
// `keep_firing_for:`, and inside each `expr` the range selectors (`[30m]`)
// and `offset` modifiers.
//
// The shipped rules keep the durations an operator needs (a 2m `for:` rides
// out a controller failover, `offset 10m` spans a quiet producer), which would
// make an end-to-end alert test take most of an hour. A test evaluates the
// same expressions on a time axis shrunk by factor instead; the file in
// alerts/ stays as it is. The YAML is rewritten as a tree, so comments,
// ordering and every other field survive.
func ScaleRules(src []byte, factor int, floor time.Duration) ([]byte, error) {
	if factor < 1 {
		return nil, fmt.Errorf("scale factor %d < 1", factor)
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(src, &doc); err != nil {
		return nil, err
	}
	s := scaler{factor: factor, floor: floor}
	groups := mapValue(docRoot(&doc), "groups")
	if groups == nil || groups.Kind != yaml.SequenceNode {
		return nil, fmt.Errorf("no groups in rule file")
	}
	for _, g := range groups.Content {
		rules := mapValue(g, "rules")
		if rules == nil {
			continue
		}
		for _, r := range rules.Content {
			if err := s.rule(r); err != nil {
				return nil, err
			}
		}
	}
	return yaml.Marshal(&doc)
}

// ScaleRuleFile writes a scaled copy of the rule file src to dst.
func ScaleRuleFile(src, dst string, factor int, floor time.Duration) error {
	b, err := os.ReadFile(src)
	if err != nil {
		return err
	}
	scaled, err := ScaleRules(b, factor, floor)
	if err != nil {
		return fmt.Errorf("%s: %w", src, err)
	}
	return os.WriteFile(dst, scaled, 0o644)
}

type scaler struct {
	factor int
	floor  time.Duration
}

// In expressions: a range selector or subquery range, `[30m]` / `[1h:1m]`
// (only the range), and an offset, `offset 10m`.
var (
	rangeRe  = regexp.MustCompile(`\[(\d+[smhdw])(:[^\]]*)?\]`)
	offsetRe = regexp.MustCompile(`\boffset\s+(\d+[smhdw])\b`)
)

func (s scaler) rule(r *yaml.Node) error {
	name := "?"
	if n := mapValue(r, "alert"); n != nil {
		name = n.Value
	} else if n := mapValue(r, "record"); n != nil {
		name = n.Value
	}
	for _, key := range []string{"for", "keep_firing_for"} {
		if n := mapValue(r, key); n != nil {
			d, err := s.scale(n.Value)
			if err != nil {
				return fmt.Errorf("rule %s: %s: %w", name, key, err)
			}
			n.Value = d
		}
	}
	expr := mapValue(r, "expr")
	if expr == nil {
		return fmt.Errorf("rule %s: no expr", name)
	}
	var err error
	scaleMatch := func(re *regexp.Regexp) func(string) string {
		return func(m string) string {
			loc := re.FindStringSubmatchIndex(m)
			d, e := s.scale(m[loc[2]:loc[3]])
			if e != nil {
				err = e
				return m
			}
			return m[:loc[2]] + d + m[loc[3]:]
		}
	}
	v := rangeRe.ReplaceAllStringFunc(expr.Value, scaleMatch(rangeRe))
	v = offsetRe.ReplaceAllStringFunc(v, scaleMatch(offsetRe))
	if err != nil {
		return fmt.Errorf("rule %s: expr: %w", name, err)
	}
	expr.Value = v
	return nil
}

// scale divides a Prometheus duration by the factor, rounded to whole
// seconds, with the floor.
func (s scaler) scale(v string) (string, error) {
	d, err := model.ParseDuration(v)
	if err != nil {
		return "", err
	}
	scaled := (time.Duration(d) / time.Duration(s.factor)).Round(time.Second)
	if scaled < s.floor {
		scaled = s.floor
	}
	return strconv.FormatInt(int64(scaled/time.Second), 10) + "s", nil
}

// docRoot skips the document node.
func docRoot(n *yaml.Node) *yaml.Node {
	if n.Kind == yaml.DocumentNode && len(n.Content) == 1 {
		return n.Content[0]
	}
	return n
}

// mapValue returns the value of key in a mapping node, or nil.
func mapValue(m *yaml.Node, key string) *yaml.Node {
	if m == nil || m.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			return m.Content[i+1]
		}
	}
	return nil
}
