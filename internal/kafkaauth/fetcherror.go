package kafkaauth

import (
	"cmp"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"mime"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"golang.org/x/oauth2"
)

// describeFetchError says in one line whether the token endpoint refused
// (an OAuth error answer) or could not be reached. Of what the endpoint sent
// it keeps only the status code, the media type and the OAuth error code and
// description, and redact cuts the secret out of the result: an endpoint
// that echoes its request (a proxy's error page, a debugging endpoint)
// would otherwise put client_secret into every log line of the failure.
func describeFetchError(err error, redact *strings.Replacer) error {
	var re *oauth2.RetrieveError
	var ue *url.Error
	var msg string
	switch {
	case errors.As(err, &re):
		msg = describeRefusal(re, redact)
	case errors.As(err, &ue):
		// The URL is the flag's, shown redacted in the source's name.
		msg = "unreachable or no valid answer: " + ue.Err.Error()
	case strings.HasPrefix(err.Error(), "oauth2: cannot parse"):
		// The parser's message quotes the answer.
		what, _, _ := strings.Cut(strings.TrimPrefix(err.Error(), "oauth2: "), ":")
		msg = "unreachable or no valid answer: " + what + " (the answer is not a token response)"
	default:
		msg = "unreachable or no valid answer: " + err.Error()
	}
	return errors.New(redact.Replace(strings.Join(strings.Fields(msg), " ")))
}

func describeRefusal(re *oauth2.RetrieveError, redact *strings.Replacer) string {
	status, media := "no HTTP status", ""
	if re.Response != nil {
		// Not Response.Status: its reason phrase is the endpoint's text.
		status = strconv.Itoa(re.Response.StatusCode)
		if text := http.StatusText(re.Response.StatusCode); text != "" {
			status += " " + text
		}
		media, _, _ = mime.ParseMediaType(re.Response.Header.Get("Content-Type"))
	}
	what := oauthField(re.ErrorCode, 64, redact)
	if d := oauthField(re.ErrorDescription, 160, redact); what != "" && d != "" {
		what += ": " + d
	}
	if what == "" {
		what = "no OAuth error in the answer"
		if media != "" {
			what = "no OAuth error in the " + oauthText(media, 64) + " answer"
		}
	}
	if re.ErrorCode == "invalid_client" || re.ErrorCode == "unauthorized_client" ||
		(re.Response != nil && re.Response.StatusCode == http.StatusUnauthorized) {
		return fmt.Sprintf("refused the client credentials (%s, %s)", status, what)
	}
	return fmt.Sprintf("gave no token (%s, %s)", status, what)
}

// oauthField is an OAuth error field fit for a log line. One that quotes
// the request is withheld whole, since a cut or re-encoded copy of the
// secret would escape the redaction.
func oauthField(s string, limit int, redact *strings.Replacer) string {
	r := redact.Replace(s)
	l := strings.ToLower(r)
	for _, quotes := range []string{"[secret]", "client_secret", "client_assertion", "authorization: basic"} {
		if strings.Contains(l, quotes) {
			return "(withheld: it quotes the request)"
		}
	}
	return oauthText(r, limit)
}

// oauthText keeps of an OAuth error field the characters RFC 6749 allows in
// it (printable ASCII but '"' and '\'), at most limit bytes of them.
func oauthText(s string, limit int) string {
	s = strings.Join(strings.Fields(strings.Map(func(r rune) rune {
		if r < 0x20 || r > 0x7e || r == '"' || r == '\\' {
			return ' '
		}
		return r
	}, s)), " ")
	if len(s) > limit {
		s = s[:limit] + "…"
	}
	return s
}

// secretRedactor replaces the secret as an endpoint could echo it: as it
// is, as the form and the Basic header encode it, and quoted as Go and
// JSON quote it.
func secretRedactor(clientID, secret string) *strings.Replacer {
	quoted := strconv.Quote(secret)
	js, _ := json.Marshal(secret)
	forms := []string{
		secret,
		url.QueryEscape(secret),
		url.PathEscape(secret),
		quoted[1 : len(quoted)-1],
		string(js[1 : len(js)-1]),
		base64.StdEncoding.EncodeToString([]byte(url.QueryEscape(clientID) + ":" + url.QueryEscape(secret))),
		base64.StdEncoding.EncodeToString([]byte(clientID + ":" + secret)),
	}
	// The longest first: a form that contains another is cut whole.
	slices.SortFunc(forms, func(a, b string) int { return cmp.Or(len(b)-len(a), strings.Compare(a, b)) })
	var pairs []string
	for _, f := range slices.Compact(forms) {
		if f != "" {
			pairs = append(pairs, f, "[secret]")
		}
	}
	return strings.NewReplacer(pairs...)
}
