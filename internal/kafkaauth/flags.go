package kafkaauth

import (
	"crypto/tls"
	"errors"
	"fmt"
	"net/url"
	"os"
	"regexp"
	"strings"
	"time"

	"github.com/alecthomas/kingpin/v2"
	"golang.org/x/oauth2/clientcredentials"
)

// The --kafka.sasl.mechanism values this package serves.
const (
	MechanismOAuthBearer = "oauthbearer"
	MechanismMSKIAM      = "aws-msk-iam"
)

// Flags are the token flags of the admin half; --kafka.sasl.mechanism
// itself is registered with the other SASL flags.
type Flags struct {
	TokenURL         string
	ClientID         string
	ClientSecretFile string
	Scopes           []string
	Extensions       []string // KEY=VALUE
	MSKRegion        string
}

// AddFlags registers the token flags on cmd.
func AddFlags(cmd *kingpin.CmdClause) *Flags {
	f := &Flags{}
	cmd.Flag("kafka.sasl.oauthbearer.token-url", "OIDC token endpoint for --kafka.sasl.mechanism=oauthbearer (client-credentials grant); "+
		"https is verified with --kafka.tls.ca-file, else the system roots.").
		StringVar(&f.TokenURL)
	cmd.Flag("kafka.sasl.oauthbearer.client-id", "OAuth client id for --kafka.sasl.mechanism=oauthbearer.").StringVar(&f.ClientID)
	cmd.Flag("kafka.sasl.oauthbearer.client-secret-file",
		"File holding the OAuth client secret (read again at every token refresh, so a rotated secret needs no restart).").
		StringVar(&f.ClientSecretFile)
	cmd.Flag("kafka.sasl.oauthbearer.scope", "OAuth scope to request (repeatable; none: the identity provider's default).").
		StringsVar(&f.Scopes)
	cmd.Flag("kafka.sasl.oauthbearer.extension",
		"SASL extension KEY=VALUE sent with the token (repeatable), e.g. logicalCluster=lkc-… and identityPoolId=pool-… for Confluent Cloud.").
		StringsVar(&f.Extensions)
	cmd.Flag("kafka.sasl.aws-msk-iam.region",
		"AWS region of the MSK cluster for --kafka.sasl.mechanism=aws-msk-iam (default: $AWS_REGION); credentials come from the AWS default chain.").
		StringVar(&f.MSKRegion)
	return f
}

// NewSource checks the token flags against the mechanism and returns the
// token source both Kafka clients share; nil for a mechanism without tokens.
// It reads the secret file once, so that a mistake stops the exporter at
// start-up, but asks no endpoint: that is what a running exporter reports
// (up 0, and the error logged).
func (f *Flags) NewSource(mechanism string, kafkaTLS *tls.Config, timeout time.Duration) (*TokenSource, error) {
	if f == nil {
		f = &Flags{} // a Config built in code, without AddFlags
	}
	oidcSet := f.TokenURL != "" || f.ClientID != "" || f.ClientSecretFile != "" || len(f.Scopes) > 0
	switch mechanism {
	case MechanismOAuthBearer:
		if f.MSKRegion != "" {
			return nil, errors.New("--kafka.sasl.aws-msk-iam.region needs --kafka.sasl.mechanism=aws-msk-iam")
		}
		return f.oidcSource(kafkaTLS, timeout)
	case MechanismMSKIAM:
		if oidcSet || len(f.Extensions) > 0 {
			return nil, errors.New("--kafka.sasl.oauthbearer.* options need --kafka.sasl.mechanism=oauthbearer")
		}
		return f.mskSource(timeout)
	}
	if oidcSet || len(f.Extensions) > 0 {
		return nil, errors.New("--kafka.sasl.oauthbearer.* options need --kafka.sasl.mechanism=oauthbearer")
	}
	if f.MSKRegion != "" {
		return nil, errors.New("--kafka.sasl.aws-msk-iam.region needs --kafka.sasl.mechanism=aws-msk-iam")
	}
	return nil, nil
}

func (f *Flags) oidcSource(kafkaTLS *tls.Config, timeout time.Duration) (*TokenSource, error) {
	if f.TokenURL == "" || f.ClientID == "" || f.ClientSecretFile == "" {
		return nil, errors.New("--kafka.sasl.mechanism=oauthbearer needs --kafka.sasl.oauthbearer.token-url, " +
			"--kafka.sasl.oauthbearer.client-id and --kafka.sasl.oauthbearer.client-secret-file")
	}
	u, err := url.Parse(f.TokenURL)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		return nil, fmt.Errorf("--kafka.sasl.oauthbearer.token-url %q: want an http(s) URL", f.TokenURL)
	}
	if _, err := readSecret(f.ClientSecretFile); err != nil {
		return nil, err
	}
	ext, err := parseExtensions(f.Extensions)
	if err != nil {
		return nil, err
	}
	fetcher := &oidcFetcher{
		conf:       clientcredentials.Config{ClientID: f.ClientID, TokenURL: f.TokenURL, Scopes: f.Scopes},
		secretFile: f.ClientSecretFile,
		client:     endpointClient(kafkaTLS, timeout),
	}
	return newTokenSource("OAuth token endpoint "+redactURL(u), fetcher.fetch, timeout, ext), nil
}

func (f *Flags) mskSource(timeout time.Duration) (*TokenSource, error) {
	region := f.MSKRegion
	if region == "" {
		region = os.Getenv("AWS_REGION")
	}
	if region == "" {
		return nil, errors.New("--kafka.sasl.mechanism=aws-msk-iam needs --kafka.sasl.aws-msk-iam.region or $AWS_REGION")
	}
	return newTokenSource("MSK IAM signer ("+region+")", mskFetcher(region, nil), timeout, nil), nil
}

// extensionKey is RFC 7628's key = 1*(ALPHA); "auth" is the token's own.
var extensionKey = regexp.MustCompile(`^[A-Za-z]+$`)

func parseExtensions(kvs []string) (map[string]string, error) {
	if len(kvs) == 0 {
		return nil, nil
	}
	ext := make(map[string]string, len(kvs))
	for _, kv := range kvs {
		k, v, ok := strings.Cut(kv, "=")
		switch {
		case !ok || !extensionKey.MatchString(k) || v == "":
			return nil, fmt.Errorf("--kafka.sasl.oauthbearer.extension %q: want KEY=VALUE with a key of letters only", kv)
		case k == "auth":
			return nil, errors.New("--kafka.sasl.oauthbearer.extension: the key auth is reserved for the token")
		case strings.ContainsRune(v, '\x01'):
			return nil, fmt.Errorf("--kafka.sasl.oauthbearer.extension %s: the value must not contain \\x01", k)
		}
		if _, dup := ext[k]; dup {
			return nil, fmt.Errorf("--kafka.sasl.oauthbearer.extension %s given twice", k)
		}
		ext[k] = v
	}
	return ext, nil
}

// redactURL drops user info and query from the URL shown in errors and logs.
func redactURL(u *url.URL) string {
	c := *u
	c.User, c.RawQuery, c.Fragment = nil, "", ""
	return c.String()
}
