// Package kafkanet dials Kafka brokers through connections that refuse a
// response frame no broker would send, before the client allocates for it.
//
// Every Kafka response starts with a 4-byte big-endian size. sarama v1.61.1
// trusts that size in its ApiVersions and SASL v0 handshakes (broker.go,
// sendAndReceiveApiVersions: make([]byte, length-4) with no MaxResponseSize
// check), so a peer that is not a broker can make it allocate up to 4 GiB: an
// HTTP server's "HTTP" reads as 1.2 GB, 0x7fffffff as 2 GiB. The connection
// from Dialer follows the response framing on every Read and fails the read
// with a *FrameError when a size is below 4 (no room for the correlation id)
// or above the limit, so sarama gets an error instead of a size.
//
// The framing is only visible above TLS, so the Dialer does TCP and TLS itself
// and sarama's own TLS is turned off: Install moves it over.
package kafkanet
