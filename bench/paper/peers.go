package main

import (
	"bytes"
	_ "embed"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"

	"gonum.org/v1/gonum/mat"
)

// peersPy is the scikit-learn side of the comparison (see its docstring).
//
//go:embed peers.py
var peersPy []byte

// defaultPython is Debian's interpreter, where python3-sklearn installs
// (a python3 earlier on PATH may be another one without scikit-learn).
const defaultPython = "/usr/bin/python3"

// peerTask is one entry of tasks.json.
type peerTask struct {
	ID      string `json:"id"`
	Kind    string `json:"kind"`
	X       string `json:"x"`
	Shape   [2]int `json:"shape"`
	Y       string `json:"y,omitempty"`
	Train   string `json:"train,omitempty"`
	Test    string `json:"test,omitempty"`
	Labeled string `json:"labeled,omitempty"`
	Rank    int    `json:"rank"`
	MaxIter int    `json:"max_iter"`
	Seed    uint64 `json:"seed"`
	// speed
	KNN         int `json:"knn,omitempty"`
	ProjectRows int `json:"project_rows,omitempty"`
	StreamBatch int `json:"stream_batch,omitempty"`
	Repeat      int `json:"repeat,omitempty"`
}

// runPeers writes the splits and data to a temporary directory, runs
// peers.py with scikit-learn and keeps its results by task id.
func (r *runner) runPeers() error {
	r.peers = map[string]map[string]float64{}
	if !r.g.peers || r.cfg.Python == "-" {
		r.peersNote = "scikit-learn peers not measured (disabled)."
		r.note("%s", r.peersNote)
		return nil
	}
	py := r.cfg.Python
	if py == "" {
		py = defaultPython
	}
	out, err := exec.CommandContext(r.ctx, py, "-c", "import sklearn; print(sklearn.__version__)").Output()
	if err != nil {
		r.peersNote = fmt.Sprintf("scikit-learn is not available to %s (%v): peers not measured. Install Debian's python3-sklearn (`apt-get install -y python3-sklearn`) to measure them.", py, err)
		r.note("%s", r.peersNote)
		return nil
	}
	r.rep.Meta.Sklearn = strings.TrimSpace(string(out))

	dir, err := os.MkdirTemp("", "nmfstream-peers-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	if err := os.WriteFile(filepath.Join(dir, "peers.py"), peersPy, 0o644); err != nil {
		return err
	}
	var tasks []peerTask
	for _, name := range []string{"digits", "mnist"} {
		d := r.data[name]
		if d == nil {
			continue
		}
		n, dim := d.x.Dims()
		xf, yf := name+"-x.f64", name+"-y.i64"
		if err := writeF64(filepath.Join(dir, xf), d.x); err != nil {
			return err
		}
		if err := writeI64(filepath.Join(dir, yf), d.y); err != nil {
			return err
		}
		for _, l := range r.g.labelSweep {
			s, err := d.split(l, r.seed)
			if err != nil {
				return err
			}
			base := fmt.Sprintf("%s-L%d", name, l)
			for suffix, idx := range map[string][]int{"train": s.idx.Train, "test": s.idx.Test, "labeled": s.idx.Labeled} {
				if err := writeI64(filepath.Join(dir, base+"-"+suffix+".i64"), idx); err != nil {
					return err
				}
			}
			tasks = append(tasks, peerTask{
				ID: peerID("accuracy", name, l), Kind: "accuracy", X: xf, Shape: [2]int{n, dim}, Y: yf,
				Train: base + "-train.i64", Test: base + "-test.i64", Labeled: base + "-labeled.i64",
				Rank: r.g.rank, MaxIter: 200, Seed: r.seed,
			})
		}
		if r.g.speed {
			tasks = append(tasks, peerTask{
				ID: peerID("speed", name, 0), Kind: "speed", X: xf, Shape: [2]int{n, dim},
				Rank: r.g.rank, MaxIter: speedIters, Seed: r.seed, KNN: 5,
				ProjectRows: projectRows(n), StreamBatch: r.g.streamBatch, Repeat: speedRepeat(r.g, name),
			})
		}
	}
	b, err := json.Marshal(tasks)
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "tasks.json"), b, 0o644); err != nil {
		return err
	}
	cmd := exec.CommandContext(r.ctx, py, filepath.Join(dir, "peers.py"), dir)
	// Forward the script's lines as they come, and keep them for errors.
	var stderr bytes.Buffer
	lw := &lineWriter{line: func(s string) {
		stderr.WriteString(s + "\n")
		r.progress("%s", s)
	}}
	cmd.Stderr, cmd.Stdout = lw, lw
	err = cmd.Run()
	lw.flush()
	if err != nil {
		return fmt.Errorf("peers.py: %v: %s", err, lastLines(stderr.String(), 5))
	}
	var res struct {
		Sklearn string           `json:"sklearn"`
		Numpy   string           `json:"numpy"`
		Results []map[string]any `json:"results"`
	}
	b, err = os.ReadFile(filepath.Join(dir, "results.json"))
	if err != nil {
		return err
	}
	if err := json.Unmarshal(b, &res); err != nil {
		return fmt.Errorf("peers.py results: %w", err)
	}
	r.rep.Meta.Sklearn = res.Sklearn + " (numpy " + res.Numpy + ")"
	for _, m := range res.Results {
		id, _ := m["id"].(string)
		vals := map[string]float64{}
		for k, v := range m {
			if f, ok := v.(float64); ok {
				vals[k] = f
			}
		}
		r.peers[id] = vals
	}
	return nil
}

// peer returns scikit-learn's value key for task id, or NaN.
func (r *runner) peer(id, key string) float64 {
	if v, ok := r.peers[id][key]; ok {
		return v
	}
	return math.NaN()
}

func peerID(kind, dataset string, l int) string {
	if kind == "speed" {
		return "speed/" + dataset
	}
	return fmt.Sprintf("%s/%s/L%d", kind, dataset, l)
}

// speedRepeat is the number of timed runs on dataset, as runSpeed does.
func speedRepeat(g *grid, dataset string) int {
	if dataset == "mnist" {
		return 1 // MNIST fits take minutes
	}
	return max(g.speedRepeat, 1)
}

// projectRows is the number of samples whose projection is timed.
func projectRows(n int) int { return min(n, 5000) }

// speedIters is the fixed update budget of the timed fits.
const speedIters = 200

// writeF64 writes m row-major as little-endian float64.
func writeF64(path string, m *mat.Dense) error {
	r, c := m.Dims()
	buf := make([]byte, 0, 8*r*c)
	for i := range r {
		for _, v := range m.RawRowView(i) {
			buf = binary.LittleEndian.AppendUint64(buf, math.Float64bits(v))
		}
	}
	return os.WriteFile(path, buf, 0o644)
}

// writeI64 writes v as little-endian int64.
func writeI64(path string, v []int) error {
	buf := make([]byte, 0, 8*len(v))
	for _, x := range v {
		buf = binary.LittleEndian.AppendUint64(buf, uint64(int64(x)))
	}
	return os.WriteFile(path, buf, 0o644)
}

// lastLines returns the last n lines of s.
func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// lineWriter calls line for every complete line written to it. The
// command's two streams may call Write from two goroutines (os/exec copies
// each stream in its own), so it locks.
type lineWriter struct {
	mu   sync.Mutex
	buf  []byte
	line func(string)
}

func (w *lineWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf = append(w.buf, p...)
	for {
		i := bytes.IndexByte(w.buf, '\n')
		if i < 0 {
			return len(p), nil
		}
		w.line(string(w.buf[:i]))
		w.buf = w.buf[i+1:]
	}
}

// flush passes on a last line without a newline.
func (w *lineWriter) flush() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.buf) > 0 {
		w.line(string(w.buf))
		w.buf = nil
	}
}
