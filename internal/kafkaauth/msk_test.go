package kafkaauth

import (
	"context"
	"encoding/base64"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/credentials"
)

// TestMSKIAMTokenFormat checks the token the source hands to both clients
// against the format of AWS's signer (aws-msk-iam-sasl-signer-go): a
// base64url presigned SigV4 URL for kafka-cluster:Connect, valid 900 s. It
// is not checked against MSK itself.
func TestMSKIAMTokenFormat(t *testing.T) {
	creds := credentials.NewStaticCredentialsProvider("AKIDEXAMPLE", "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", "session-token")
	s := newTokenSource("MSK IAM signer (eu-west-1)", mskFetcher("eu-west-1", creds), 5*time.Second, nil)
	before := time.Now()
	tok, err := s.Token(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	raw, err := base64.RawURLEncoding.DecodeString(tok)
	if err != nil {
		t.Fatalf("token is not base64url without padding: %v", err)
	}
	u, err := url.Parse(string(raw))
	if err != nil {
		t.Fatal(err)
	}
	if u.Scheme != "https" || u.Host != "kafka.eu-west-1.amazonaws.com" || u.Path != "/" {
		t.Errorf("signed URL %s://%s%s, want https://kafka.eu-west-1.amazonaws.com/", u.Scheme, u.Host, u.Path)
	}
	q := u.Query()
	date := time.Now().UTC().Format("20060102")
	for k, want := range map[string]string{
		"Action":               "kafka-cluster:Connect",
		"X-Amz-Algorithm":      "AWS4-HMAC-SHA256",
		"X-Amz-Credential":     "AKIDEXAMPLE/" + date + "/eu-west-1/kafka-cluster/aws4_request",
		"X-Amz-Expires":        "900",
		"X-Amz-Security-Token": "session-token",
		"X-Amz-SignedHeaders":  "host",
	} {
		if got := q.Get(k); got != want {
			t.Errorf("%s=%q, want %q", k, got, want)
		}
	}
	if !regexp.MustCompile(`^[0-9a-f]{64}$`).MatchString(q.Get("X-Amz-Signature")) {
		t.Errorf("X-Amz-Signature %q", q.Get("X-Amz-Signature"))
	}
	if !strings.HasPrefix(q.Get("User-Agent"), "aws-msk-iam-sasl-signer-go/") {
		t.Errorf("User-Agent %q", q.Get("User-Agent"))
	}

	// The source refreshes it at 80% of its 15 minutes.
	s.mu.Lock()
	exp, issued := s.cur.Expiry, s.cur.Issued
	s.mu.Unlock()
	if d := exp.Sub(before); d < 899*time.Second || d > 901*time.Second {
		t.Errorf("expiry %v after the request, want 900s", d)
	}
	if d := refreshAt(s.cur).Sub(issued); d < 719*time.Second || d > 721*time.Second {
		t.Errorf("refresh %v after issue, want 720s", d)
	}
}

func TestMSKIAMFlags(t *testing.T) {
	t.Setenv("AWS_REGION", "")
	if _, err := (&Flags{}).NewSource(MechanismMSKIAM, nil, time.Second); err == nil || !strings.Contains(err.Error(), "needs --kafka.sasl.aws-msk-iam.region") {
		t.Errorf("no region: err %v", err)
	}
	t.Setenv("AWS_REGION", "us-east-1")
	s, err := (&Flags{}).NewSource(MechanismMSKIAM, nil, time.Second)
	if err != nil || s.what != "MSK IAM signer (us-east-1)" {
		t.Errorf("region from $AWS_REGION: %v, %v", s, err)
	}
	for _, tc := range []struct {
		mech string
		f    Flags
		want string
	}{
		{MechanismMSKIAM, Flags{MSKRegion: "x", TokenURL: "https://idp/token"}, "need --kafka.sasl.mechanism=oauthbearer"},
		{MechanismMSKIAM, Flags{MSKRegion: "x", Extensions: []string{"a=b"}}, "need --kafka.sasl.mechanism=oauthbearer"},
		{MechanismOAuthBearer, Flags{MSKRegion: "x"}, "needs --kafka.sasl.mechanism=aws-msk-iam"},
		{"plain", Flags{MSKRegion: "x"}, "needs --kafka.sasl.mechanism=aws-msk-iam"},
	} {
		if _, err := tc.f.NewSource(tc.mech, nil, time.Second); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s %+v: err %v, want %q", tc.mech, tc.f, err, tc.want)
		}
	}
}

// TestMSKIAMWithoutCredentials: a missing credential is a clear error, not
// a token the brokers refuse.
func TestMSKIAMWithoutCredentials(t *testing.T) {
	creds := credentials.NewStaticCredentialsProvider("", "", "")
	s := newTokenSource("MSK IAM signer (eu-west-1)", mskFetcher("eu-west-1", creds), time.Second, nil)
	if _, err := s.Token(context.Background()); err == nil || !strings.Contains(err.Error(), "MSK IAM signer (eu-west-1): failed to load credentials") {
		t.Errorf("err %v", err)
	}
}
