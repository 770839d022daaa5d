package poller

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/IBM/sarama"
)

// TestOAuthBearerReachesBothClients: one token source, shared by sarama's
// TokenProvider and the ELR reader's franz-go mechanism.
func TestOAuthBearerReachesBothClients(t *testing.T) {
	secret := filepath.Join(t.TempDir(), "secret")
	if err := os.WriteFile(secret, []byte("s3cret\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := parseAdminFlags(t, nil, "--kafka.server=localhost:9093", "--kafka.sasl.mechanism=oauthbearer",
		"--kafka.sasl.oauthbearer.token-url=https://idp.example/token", "--kafka.sasl.oauthbearer.client-id=exporter",
		"--kafka.sasl.oauthbearer.client-secret-file="+secret)
	if err != nil {
		t.Fatal(err)
	}
	sc, ec, err := cfg.clientConfigs()
	if err != nil {
		t.Fatal(err)
	}
	if !sc.Net.SASL.Enable || sc.Net.SASL.Mechanism != sarama.SASLTypeOAuth || sc.Net.SASL.TokenProvider == nil {
		t.Errorf("sarama SASL %+v, want OAUTHBEARER with a token provider", sc.Net.SASL)
	}
	if ec.SASLMechanism != "oauthbearer" || ec.Tokens == nil {
		t.Errorf("ELR config %+v, want oauthbearer with the token source", ec)
	}

	t.Setenv("AWS_REGION", "")
	msk, err := parseAdminFlags(t, nil, "--kafka.server=b-1.example.kafka.eu-west-1.amazonaws.com:9098", "--kafka.tls.enabled",
		"--kafka.sasl.mechanism=aws-msk-iam", "--kafka.sasl.aws-msk-iam.region=eu-west-1")
	if err != nil {
		t.Fatal(err)
	}
	sc, ec, err = msk.clientConfigs()
	if err != nil {
		t.Fatal(err)
	}
	if sc.Net.SASL.Mechanism != sarama.SASLTypeOAuth || sc.Net.SASL.TokenProvider == nil || ec.SASLMechanism != "aws-msk-iam" || ec.Tokens == nil {
		t.Errorf("aws-msk-iam: sarama %+v, ELR %+v; want OAUTHBEARER with the signer's tokens in both", sc.Net.SASL, ec)
	}

	for args, want := range map[string]string{
		"--kafka.sasl.oauthbearer.client-id=exporter":                          "needs --kafka.sasl.oauthbearer.token-url",
		"--kafka.sasl.username=u --kafka.sasl.oauthbearer.token-url=https://x": "need --kafka.sasl.mechanism plain or scram-*",
	} {
		_, err := parseAdminFlags(t, nil, append([]string{"--kafka.server=localhost:9093", "--kafka.sasl.mechanism=oauthbearer"}, strings.Fields(args)...)...)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: err %v, want %q", args, err, want)
		}
	}
}
