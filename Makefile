# make test: the one test command. It installs and starts Redis and MariaDB
# (see .ci/services), checks formatting, vets, runs staticcheck and the race
# tests, then stops the servers.
GO ?= go
PKGS := ./...

.PHONY: test lint unit bench fuzz build

test: lint
	.ci/services $(GO) test -race -count=1 -timeout 8m $(PKGS)

lint:
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	  if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi
	$(GO) vet $(PKGS)
	$(GO) tool staticcheck $(PKGS)

# unit runs the tests without servers: tests that need one skip.
unit:
	$(GO) test -count=1 $(PKGS)

bench:
	.ci/services $(GO) test -run '^$$' -bench . -benchmem $(PKGS)

build:
	$(GO) build -o bin/countersign ./cmd/countersign
