package poller

import (
	"github.com/IBM/sarama"
	"github.com/xdg-go/scram"
)

// scramClient adapts xdg-go/scram to sarama.SCRAMClient, as sarama's own
// examples do: sarama ships the SASL framing but not the SCRAM maths.
type scramClient struct {
	hash scram.HashGeneratorFcn
	conv *scram.ClientConversation
}

func newSCRAMSHA256Client() sarama.SCRAMClient { return &scramClient{hash: scram.SHA256} }
func newSCRAMSHA512Client() sarama.SCRAMClient { return &scramClient{hash: scram.SHA512} }

func (s *scramClient) Begin(user, password, authzID string) error {
	c, err := s.hash.NewClient(user, password, authzID)
	if err != nil {
		return err
	}
	s.conv = c.NewConversation()
	return nil
}

func (s *scramClient) Step(challenge string) (string, error) { return s.conv.Step(challenge) }

func (s *scramClient) Done() bool { return s.conv.Done() }
