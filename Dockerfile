# kafka_replication_exporter: a static binary on distroless, running as nobody.
#
#   docker build --build-arg VERSION=$(cat VERSION) --build-arg REVISION=$(git rev-parse --short HEAD) \
#                --build-arg BRANCH=$(git rev-parse --abbrev-ref HEAD) \
#                --build-arg BUILD_DATE=$(date -u +%Y%m%d-%H:%M:%S) -t kafka_replication_exporter .
#
#   # The broker's log directory read-only, with a group that may read it (see README "Install"):
#   docker run --read-only --group-add $(stat -c %g /var/log/kafka) -p 9742:9742 \
#              -v /var/log/kafka:/var/log/kafka:ro kafka_replication_exporter
#
# `make build` produces the same binary with the same flags; deploy/dockerfile_test.go
# checks that the two agree.

ARG GO_VERSION=1.26

FROM golang:${GO_VERSION} AS builder
WORKDIR /src
# Modules first, so editing the code does not re-download them.
COPY go.mod go.sum ./
RUN go mod download
# Only the packages the binary is built from (dockerfile_test.go checks the list).
COPY cmd/ cmd/
COPY internal/ internal/
ARG VERSION=0.1.0
ARG REVISION=unknown
ARG BRANCH=unknown
ARG BUILD_USER=docker
ARG BUILD_DATE=unknown
# CGO off: a static binary that runs on distroless/static (no libc).
RUN CGO_ENABLED=0 go build -trimpath -o /out/kafka_replication_exporter \
      -ldflags "-s -w \
        -X github.com/prometheus/common/version.Version=${VERSION} \
        -X github.com/prometheus/common/version.Revision=${REVISION} \
        -X github.com/prometheus/common/version.Branch=${BRANCH} \
        -X github.com/prometheus/common/version.BuildUser=${BUILD_USER} \
        -X github.com/prometheus/common/version.BuildDate=${BUILD_DATE}" \
      ./cmd/kafka_replication_exporter

FROM gcr.io/distroless/static-debian12:nonroot
ARG VERSION=0.1.0
ARG REVISION=unknown
ARG BUILD_DATE=unknown
LABEL org.opencontainers.image.title="kafka_replication_exporter" \
      org.opencontainers.image.description="Prometheus exporter and verifier for Kafka replication health, fed by the broker's own logs and the admin API" \
      org.opencontainers.image.source="https://github.com/kafka-replication-exporter/kafka_replication_exporter" \
      org.opencontainers.image.documentation="https://github.com/kafka-replication-exporter/kafka_replication_exporter/blob/main/README.md" \
      org.opencontainers.image.licenses="Apache-2.0" \
      org.opencontainers.image.version="${VERSION}" \
      org.opencontainers.image.revision="${REVISION}" \
      org.opencontainers.image.created="${BUILD_DATE}"
COPY --from=builder /out/kafka_replication_exporter /bin/kafka_replication_exporter
COPY LICENSE /LICENSE
# nobody: the sidecar only reads. Give it the log directory's group with
# `--group-add` / `securityContext.fsGroup` rather than running as root. It
# writes nothing unless --log.position-file points into a mounted volume, so
# a read-only root filesystem works.
USER 65534:65534
EXPOSE 9742
ENTRYPOINT ["/bin/kafka_replication_exporter"]
# serve is the default command; these are Kafka's default file names in the
# directory mounted at /var/log/kafka. Any arguments given to `docker run`
# replace them all.
CMD ["--log.file=/var/log/kafka/server.log", "--log.file=/var/log/kafka/state-change.log", "--log.file=/var/log/kafka/controller.log"]
