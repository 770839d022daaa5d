package kafkaauth

import (
	"context"
	"time"

	"github.com/aws/aws-msk-iam-sasl-signer-go/signer"
	"github.com/aws/aws-sdk-go-v2/aws"
)

// mskFetcher signs MSK IAM tokens (a presigned kafka-cluster:Connect URL,
// valid 15 minutes) with the credentials of the AWS default chain (the
// environment, web identity as in EKS IRSA, the container or instance
// role, the shared files), or with creds when given (tests).
func mskFetcher(region string, creds aws.CredentialsProvider) fetchFunc {
	return func(ctx context.Context) (Token, error) {
		var (
			tok    string
			expiry int64
			err    error
		)
		if creds != nil {
			tok, expiry, err = signer.GenerateAuthTokenFromCredentialsProvider(ctx, region, creds)
		} else {
			tok, expiry, err = signer.GenerateAuthToken(ctx, region)
		}
		if err != nil {
			return Token{}, err
		}
		return Token{Value: tok, Expiry: time.UnixMilli(expiry)}, nil
	}
}
