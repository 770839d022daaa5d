// Package kafkaauth supplies the bearer tokens of SASL/OAUTHBEARER to both
// Kafka clients of the admin half (sarama and franz-go): from an OIDC token
// endpoint with the client-credentials grant (golang.org/x/oauth2), or signed
// for Amazon MSK IAM (aws-msk-iam-sasl-signer-go).
//
// One TokenSource serves both clients, caches the token and fetches a new one
// once 80% of its lifetime has passed (Kafka's own client refreshes at the
// same point, sasl.login.refresh.window.factor). If that refresh fails, the
// current token is used while it is valid and the refresh is retried; only a
// client without a valid token gets the error, which names the endpoint and
// what it answered.
package kafkaauth
