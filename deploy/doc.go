// Package deploy holds the deployment examples (Kubernetes, Strimzi, systemd,
// Prometheus) and, in its tests, the checks that they parse, use only flags the
// program has, and agree with the Dockerfile and the Makefile.
package deploy
