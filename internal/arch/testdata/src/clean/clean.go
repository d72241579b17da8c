// Package clean does nothing the rules restrict: it reads the environment,
// locks a mutex, joins paths and unmarshals a value.
package clean

import (
	"encoding/json"
	"os"
	"path/filepath"
	"sync"
)

var mu sync.Mutex

func Config() (string, error) {
	mu.Lock()
	defer mu.Unlock()
	var v struct{ A int }
	if err := json.Unmarshal([]byte(`{"A":1}`), &v); err != nil && os.IsNotExist(err) {
		return "", os.ErrNotExist
	}
	return filepath.Join(os.Getenv("HOME"), "x"), nil
}
