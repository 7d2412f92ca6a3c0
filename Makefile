# fencecheck: the two commands a user needs are `make run` and `make test`.
CARGO ?= cargo

.PHONY: run test setup setup-test image fmt clippy clean-containers

## Run the default test (etcd lease lock, strictly fenced resource, holder pauses > TTL). It
## builds the dev profile, the build `make test` uses: a single run checks its history in
## milliseconds either way, and the release profile's fat LTO (for grids, benchmarks and
## artefacts: `cargo build --release`) takes three times as long to build. The node image builds
## (scripts/images start-node) while the rest of fencecheck compiles.
run: setup
	$(CARGO) build -p node-image --bin fencecheck-node-image
	scripts/images start-node
	$(CARGO) build --bin fencecheck
	scripts/images wait
	$(CARGO) run --bin fencecheck -- run

## Format check, clippy with warnings denied, and every test (container tests included). The
## node and client images build in the background meanwhile (scripts/images).
test: setup-test fmt
	$(CARGO) build --bin fencecheck
	scripts/images start
	$(CARGO) clippy --workspace --all-targets -- -D warnings
	$(CARGO) test --workspace --no-run
	scripts/images wait
	$(CARGO) test --workspace

## Install the system packages a fresh machine lacks and start a Docker engine (scripts/setup).
setup:
	scripts/setup

setup-test:
	FENCECHECK_SETUP_FOR=test scripts/setup

fmt:
	$(CARGO) fmt --all -- --check

clippy:
	$(CARGO) clippy --workspace --all-targets -- -D warnings

## Build the node image unless it is already present (its tag is a hash of the package list).
image: setup
	$(CARGO) run --bin fencecheck -- image build

## Remove every container and network fencecheck left behind (all runs).
clean-containers:
	$(CARGO) run --bin fencecheck -- clean
