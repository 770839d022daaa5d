package main

// The documentation's relative links (a file, a file#anchor, a #anchor of the
// same page) must lead somewhere, and every alert's runbook_url must name a
// heading of the runbook: a page moved or a heading renamed would otherwise
// leave links that end on GitHub's 404 page or at the top of the runbook.

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"unicode"

	"go.yaml.in/yaml/v2"
)

const repoRoot = "../.."

// linkedPages are the pages whose links are checked, relative to repoRoot;
// patterns are globbed.
var linkedPages = []string{
	"README.md", "CONTRIBUTING.md", "CHANGELOG.md", "docs/*.md", "alerts/runbook.md", "e2e/README.md",
}

// The parts of Markdown this needs: fenced code blocks (no links, no
// headings inside), inline code spans, ATX headings and inline links or
// images. Reference-style links are not used in these pages.
var (
	fence       = regexp.MustCompile("^\\s*(```|~~~)")
	codeSpan    = regexp.MustCompile("`+[^`]*`+")
	atxHeading  = regexp.MustCompile(`^#{1,6}\s+(.*?)\s*#*\s*$`)
	inlineLink  = regexp.MustCompile(`!?\[((?:[^\[\]]|\[[^\]]*\])*)\]\(\s*<?([^)\s>]*)>?(?:\s+"[^"]*")?\s*\)`)
	htmlAnchor  = regexp.MustCompile(`<a\s+(?:name|id)="([^"]+)"`)
	emphasis    = regexp.MustCompile(`(\*\*|\*)([^*]+)(\*\*|\*)`)
	schemePart  = regexp.MustCompile(`^[a-zA-Z][a-zA-Z0-9+.-]*:`)
	headingHTML = regexp.MustCompile(`<[^>]+>`)
)

// githubSlug is the anchor GitHub gives a heading: the rendered text in lower
// case, every character that is not a letter, mark, digit, connector
// (underscore), space or hyphen dropped, spaces turned into hyphens.
func githubSlug(heading string) string {
	text := inlineLink.ReplaceAllString(heading, "$1")
	text = strings.ReplaceAll(text, "`", "")
	text = headingHTML.ReplaceAllString(text, "")
	text = emphasis.ReplaceAllString(text, "$2")
	var b strings.Builder
	for _, r := range strings.ToLower(strings.TrimSpace(text)) {
		switch {
		case r == ' ':
			b.WriteRune('-')
		case r == '-' || unicode.IsLetter(r) || unicode.IsMark(r) || unicode.IsDigit(r) || unicode.Is(unicode.Pc, r):
			b.WriteRune(r)
		}
	}
	return b.String()
}

// markdownPage is what the check needs of one page: its anchors and its
// relative links, each with its line number.
type markdownPage struct {
	anchors map[string]bool
	links   []pageLink
}

type pageLink struct {
	line   int
	target string
}

func parseMarkdown(text string) markdownPage {
	p := markdownPage{anchors: map[string]bool{}}
	seen := map[string]int{}
	inFence := false
	for i, line := range strings.Split(text, "\n") {
		if fence.MatchString(line) {
			inFence = !inFence
			continue
		}
		if inFence {
			continue
		}
		for _, m := range htmlAnchor.FindAllStringSubmatch(line, -1) {
			p.anchors[m[1]] = true
		}
		if m := atxHeading.FindStringSubmatch(line); m != nil && !strings.HasPrefix(line, "    ") {
			// GitHub numbers a repeated slug: x, x-1, x-2.
			slug := githubSlug(m[1])
			if n := seen[slug]; n > 0 {
				p.anchors[fmt.Sprintf("%s-%d", slug, n)] = true
			} else {
				p.anchors[slug] = true
			}
			seen[slug]++
		}
		for _, m := range inlineLink.FindAllStringSubmatch(codeSpan.ReplaceAllString(line, ""), -1) {
			if target := m[2]; target != "" && !schemePart.MatchString(target) {
				p.links = append(p.links, pageLink{line: i + 1, target: target})
			}
		}
	}
	return p
}

// TestLinks: every relative link of the documentation resolves to a file or
// directory of the repository, and its #anchor, if any, to a heading of that
// page.
func TestLinks(t *testing.T) {
	var files []string
	for _, pattern := range linkedPages {
		matches, err := filepath.Glob(filepath.Join(repoRoot, pattern))
		if err != nil || len(matches) == 0 {
			t.Fatalf("%s: no page (%v)", pattern, err)
		}
		files = append(files, matches...)
	}
	pages := map[string]markdownPage{}
	load := func(path string) (markdownPage, error) {
		if p, ok := pages[path]; ok {
			return p, nil
		}
		raw, err := os.ReadFile(path)
		if err != nil {
			return markdownPage{}, err
		}
		p := parseMarkdown(string(raw))
		pages[path] = p
		return p, nil
	}
	for _, file := range files {
		page, err := load(file)
		if err != nil {
			t.Fatal(err)
		}
		rel, _ := filepath.Rel(repoRoot, file)
		for _, l := range page.links {
			path, anchor, _ := strings.Cut(l.target, "#")
			dest := file
			if path != "" {
				dest = filepath.Join(filepath.Dir(file), filepath.FromSlash(path))
				if _, err := os.Stat(dest); err != nil {
					t.Errorf("%s:%d: link %q: no such file or directory", rel, l.line, l.target)
					continue
				}
			}
			if anchor == "" {
				continue
			}
			if !strings.HasSuffix(dest, ".md") {
				t.Errorf("%s:%d: link %q: an anchor into a file that is not Markdown", rel, l.line, l.target)
				continue
			}
			target, err := load(dest)
			if err != nil {
				t.Errorf("%s:%d: link %q: %v", rel, l.line, l.target, err)
				continue
			}
			if !target.anchors[anchor] {
				t.Errorf("%s:%d: link %q: no heading with anchor #%s", rel, l.line, l.target, anchor)
			}
		}
	}
}

// TestRunbookURLs: every alert's runbook_url is the runbook's address with
// the anchor of an existing heading.
func TestRunbookURLs(t *testing.T) {
	rules, err := os.ReadFile(rulesPath)
	if err != nil {
		t.Fatal(err)
	}
	var rf ruleFile
	if err := yaml.UnmarshalStrict(rules, &rf); err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(filepath.Join(repoRoot, "alerts/runbook.md"))
	if err != nil {
		t.Fatal(err)
	}
	runbook := parseMarkdown(string(raw))
	n := 0
	for _, g := range rf.Groups {
		for _, r := range g.Rules {
			if r.Alert == "" {
				continue
			}
			n++
			url := r.Annotations["runbook_url"]
			path, anchor, ok := strings.Cut(url, "#")
			switch {
			case !strings.HasSuffix(path, "/alerts/runbook.md"):
				t.Errorf("%s: runbook_url %q does not point at alerts/runbook.md", r.Alert, url)
			case !ok || !runbook.anchors[anchor]:
				t.Errorf("%s: runbook_url %q: alerts/runbook.md has no heading with anchor #%s", r.Alert, url, anchor)
			}
		}
	}
	if n == 0 {
		t.Fatalf("%s: no alerting rule", rulesPath)
	}
}

func TestGithubSlug(t *testing.T) {
	for heading, want := range map[string]string{
		"KafkaPartitionUnderMinISR":                                               "kafkapartitionunderminisr",
		"Quick start against an existing cluster":                                 "quick-start-against-an-existing-cluster",
		"`verify`: replication invariants over broker logs":                       "verify-replication-invariants-over-broker-logs",
		"Only the unhealthy partitions: `--collector.partition-series=unhealthy`": "only-the-unhealthy-partitions---collectorpartition-seriesunhealthy",
		"Reading ISR + ELR against min ISR":                                       "reading-isr--elr-against-min-isr",
		"The HW history — and the **memory** limit":                               "the-hw-history--and-the-memory-limit",
		"[Scope](docs/scope.md) and log_dirs":                                     "scope-and-log_dirs",
	} {
		if got := githubSlug(heading); got != want {
			t.Errorf("githubSlug(%q) = %q, want %q", heading, got, want)
		}
	}
}

func TestParseMarkdown(t *testing.T) {
	p := parseMarkdown("# Title\n\n## Same\n## Same\n```sh\n# not a heading [x](nowhere.md)\n```\n" +
		"See [a](a.md#x), `[b](b.md)`, [web](https://example.com), ![pic](p.png) and [here](#same-1).\n")
	for _, a := range []string{"title", "same", "same-1"} {
		if !p.anchors[a] {
			t.Errorf("anchor %q missing in %v", a, p.anchors)
		}
	}
	if p.anchors["not-a-heading"] {
		t.Error("a # line inside a code block is not a heading")
	}
	var got []string
	for _, l := range p.links {
		got = append(got, l.target)
	}
	if want := "a.md#x p.png #same-1"; strings.Join(got, " ") != want {
		t.Errorf("links %q, want %q", strings.Join(got, " "), want)
	}
}

// readmeMaxBytes keeps the README a page an operator reads in five minutes,
// as long as node_exporter's; reference material belongs in docs/.
const readmeMaxBytes = 20_000

func TestReadmeIsShort(t *testing.T) {
	fi, err := os.Stat(filepath.Join(repoRoot, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	if fi.Size() > readmeMaxBytes {
		t.Errorf("README.md is %d bytes, over %d: move reference material to docs/ and link it", fi.Size(), readmeMaxBytes)
	}
}
