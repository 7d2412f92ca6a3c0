#!/bin/sh
# Builds the adapter at image build time (Dockerfile) with Debian's Go and etcd sources, GOPATH mode.
set -e
cd "$(dirname "$0")"
GO111MODULE=off GOPATH=/usr/share/gocode GOCACHE=/tmp/go-build go build -o etcd-concurrency-adapter .
rm -rf /tmp/go-build
# The library is compiled in; `fencecheck clients` reads its Debian version from this file.
dpkg-query -W -f '${Version}\n' golang-etcd-server-dev > library-version
