package kafkaauth

import (
	"context"

	"github.com/IBM/sarama"
	"github.com/twmb/franz-go/pkg/sasl"
	"github.com/twmb/franz-go/pkg/sasl/oauth"
)

// Sarama adapts the source to sarama's Net.SASL.TokenProvider.
func (s *TokenSource) Sarama() sarama.AccessTokenProvider { return saramaProvider{s} }

type saramaProvider struct{ s *TokenSource }

// Token has no context in sarama's interface; the source's own timeout
// bounds it.
func (p saramaProvider) Token() (*sarama.AccessToken, error) {
	t, err := p.s.Token(context.Background())
	if err != nil {
		return nil, err
	}
	return &sarama.AccessToken{Token: t, Extensions: p.s.Extensions()}, nil
}

// Franz is the source as a franz-go OAUTHBEARER mechanism (kgo.SASL).
func (s *TokenSource) Franz() sasl.Mechanism {
	return oauth.Oauth(func(ctx context.Context) (oauth.Auth, error) {
		t, err := s.Token(ctx)
		if err != nil {
			return oauth.Auth{}, err
		}
		return oauth.Auth{Token: t, Extensions: s.Extensions()}, nil
	})
}
