//go:build !nats

package main

import "fmt"

// haveEmbeddedNATS says that this binary has no embedded server.
const haveEmbeddedNATS = false

// embeddedNATS reports that this binary has no embedded server: linking
// nats-server would slow the default build (BENCHMARKS.md, "Scale-out").
func embeddedNATS(listen, dir string) (string, func(), error) {
	return "", nil, fmt.Errorf("%w: --nats URL is required: this binary has no embedded NATS server (run it with `go run -tags nats ./cmd/nmfstream worker ...`, or start a cluster with scripts/nats-cluster.sh)", errUsage)
}
