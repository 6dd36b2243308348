# Countersign in a container: a static binary on a small Debian base that
# keeps bash and the read-only tools an on-call engineer expects (ps, ss,
# dig, curl, jq…), since execute_command runs `bash -c`. The binary is built
# by `make build`, the very target the Makefile ships, so what is tested is
# what runs here. No secret is baked in: tokens and DSNs come from the
# environment (compose.yaml's env_file). `make test` lints this file
# (configs/image_test.go, and hadolint when it is installed).
FROM golang:1.26-bookworm AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
RUN make build

FROM debian:bookworm-slim
# Versions are not pinned: the image takes Debian's security updates when
# it is rebuilt.
# hadolint ignore=DL3008
RUN apt-get update \
 && apt-get install -y --no-install-recommends \
      bash ca-certificates curl dnsutils iproute2 iputils-ping jq less lsof netcat-openbsd procps \
 && rm -rf /var/lib/apt/lists/* \
 && useradd --create-home --uid 10001 countersign
COPY --from=build /src/bin/countersign /usr/local/bin/countersign
COPY configs/container.yaml /etc/countersign/countersign.yaml
COPY configs/countersign.example.yaml /etc/countersign/countersign.example.yaml
ENV COUNTERSIGN_CONFIG=/etc/countersign/countersign.yaml
USER countersign
WORKDIR /home/countersign
EXPOSE 9464
# /healthz is served on ops.listen (configs/container.yaml).
HEALTHCHECK --interval=30s --timeout=3s --start-period=20s --retries=3 \
  CMD ["curl", "-fsS", "-o", "/dev/null", "http://127.0.0.1:9464/healthz"]
ENTRYPOINT ["/usr/local/bin/countersign"]
CMD ["run"]
