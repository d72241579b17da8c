// Package benchrun holds what the measuring commands under bench/ share:
// the median of their runs, where the fetched data sets live, and the
// nmfstream binary they time, built from the checkout.
package benchrun

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
)

// Median returns the median of xs (the mean of the two middle values for
// an even count), leaving xs as it is. It returns NaN for no values.
func Median(xs []float64) float64 {
	if len(xs) == 0 {
		return nan()
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

func nan() float64 {
	var zero float64
	return zero / zero
}

// DataDir returns the folder scripts/fetch-data.sh fills,
// ~/.cache/nmfstream-data, joined with the parts given (e.g. "mnist").
func DataDir(parts ...string) string {
	home, _ := os.UserHomeDir()
	return filepath.Join(append([]string{home, ".cache", "nmfstream-data"}, parts...)...)
}

// BuildNmfstream builds ./cmd/nmfstream as dir/nmfstream and returns its
// path; it must run from the repository's root.
func BuildNmfstream(dir string) (string, error) {
	bin := filepath.Join(dir, "nmfstream")
	if out, err := exec.Command("go", "build", "-o", bin, "./cmd/nmfstream").CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build ./cmd/nmfstream (run from the repository's root): %v\n%s", err, out)
	}
	return bin, nil
}

// WriteJSON writes v, indented, with a final newline, to the file at path
// (the runs a command keeps for --replot).
func WriteJSON(path string, v any) error {
	b, err := json.MarshalIndent(v, "", "\t")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(b, '\n'), 0o644)
}
