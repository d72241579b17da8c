// Command tool builds decoders, one of them allowed.
package main

import (
	"bytes"
	"encoding/csv"
	enc "encoding/json"
	"os"
)

func allowedDecoder() { _ = enc.NewDecoder(os.Stdin) }

func main() {
	_ = csv.NewReader(bytes.NewReader(nil))
	_ = enc.NewDecoder(bytes.NewReader(nil))
	allowedDecoder()
}
