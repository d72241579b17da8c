//go:build nats

package main

import (
	"fmt"
	"net"
	"os"
	"strconv"

	"github.com/nmfstream/nmfstream/distributed/natsembed"
)

// haveEmbeddedNATS says that this binary has an embedded server.
const haveEmbeddedNATS = true

// embeddedNATS starts a single-node JetStream server on listen
// (host:port), storing in dir or a temporary directory, and returns its
// client URL and a function that stops it (and removes the temporary
// directory).
func embeddedNATS(listen, dir string) (string, func(), error) {
	host, p, err := net.SplitHostPort(listen)
	if err != nil {
		return "", nil, fmt.Errorf("%w: --listen %q: %v", errUsage, listen, err)
	}
	port, err := strconv.Atoi(p)
	if err != nil || port < 0 {
		return "", nil, fmt.Errorf("%w: --listen %q: port must be a number ≥ 0", errUsage, listen)
	}
	tmp := ""
	if dir == "" {
		if tmp, err = os.MkdirTemp("", "nmfstream-nats-*"); err != nil {
			return "", nil, err
		}
		dir = tmp
	}
	s, err := natsembed.Start(dir, host, port)
	if err != nil {
		if tmp != "" {
			os.RemoveAll(tmp)
		}
		return "", nil, err
	}
	return s.ClientURL(), func() {
		s.Shutdown()
		s.WaitForShutdown()
		if tmp != "" {
			os.RemoveAll(tmp)
		}
	}, nil
}
