# Countersign in a container: a static binary on a small Debian base that
# keeps bash and the usual read-only tools, since execute_command runs
# `bash -c` and on-call engineers expect ls, df, ps and friends.
FROM golang:1.26-bookworm AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
RUN CGO_ENABLED=0 go build -trimpath -ldflags="-s -w" -o /out/countersign ./cmd/countersign

FROM debian:bookworm-slim
RUN apt-get update \
 && apt-get install -y --no-install-recommends bash ca-certificates procps iproute2 dnsutils \
 && rm -rf /var/lib/apt/lists/* \
 && useradd --create-home --uid 10001 countersign
COPY --from=build /out/countersign /usr/local/bin/countersign
COPY configs/countersign.example.yaml /etc/countersign/countersign.example.yaml
USER countersign
WORKDIR /home/countersign
ENTRYPOINT ["/usr/local/bin/countersign"]
CMD ["run"]
