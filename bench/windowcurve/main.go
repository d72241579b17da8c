// Command windowcurve measures the stream's steady-state throughput against
// the size of its window (issue 30's window curve, at the stream level):
// `nmfstream stream --window W` on an MNIST-derived stream long enough to
// run a 100,000-sample window full, with its default search space (the
// span of the search basis on MNIST) or, with --search-basis 0, the pixels.
//
//	go run ./bench/windowcurve [--mnist DIR] [--windows 1000,3000,10000,30000,100000] [--search-basis 40] [--runs 1] [--png w.png] [--json w.json]
//	go run ./bench/windowcurve --replot w.json[,pixels.json] --png w.png
//
// The stream (streamRow, labeled): the 60,000 training images, then the
// same images shifted right by one pixel (column 0 zero) as 60,000 new
// samples, ids 0…119,999 in order, a seeded tenth of them labeled on
// arrival (the label in the record itself). It is written as an Arrow IPC
// stream to the child's standard input (`--in -`), so nothing is stored.
//
// The steady state: each window W is run twice, on the first N1 and the
// first N2 = N1 + b records, and the rate is (N2 − N1)/(t2 − t1) in wall
// seconds and in CPU seconds (user + system of the child, which other
// tenants move less). Start-up, reading the first N1 records, the window's
// filling and the search basis's fits before N1 are in both runs and
// cancel. N1 is W + a (the window full for a records: at W = 100,000 the
// batch is 1,000 records) moved past any refit of the search basis that
// [N1, N2] would hold (steadyRange): a refit rebuilds the whole window's
// graph (Slots²·K flops), so a run straddling one would charge its cost to
// the steady state. The schedule, 500 samples then four-fold, is
// model.Online.SearchBasis's (model/online.go). With a = 2,000 and b =
// 16,000 the 100,000 window runs 102,000 and 118,000 records, below both
// the stream's 120,000 and the next refit at 128,000.
//
// --json keeps the runs; --replot draws one or more kept files (each a
// curve) without measuring; --png draws records/s and records per CPU
// second against W, log–log, with internal/figure.
package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/array"
	"github.com/apache/arrow/go/v15/arrow/ipc"
	"github.com/apache/arrow/go/v15/arrow/memory"
	"gonum.org/v1/gonum/mat"

	"github.com/nmfstream/nmfstream/internal/figure"
	"github.com/nmfstream/nmfstream/sources"
)

// refitFirst is the number of samples seen at the search basis's first fit;
// it is refitted each time that count grows four-fold (model/online.go,
// Online.SearchBasis).
const refitFirst = 500

// result is one window's runs.
type result struct {
	Window      int          `json:"window"`
	SearchBasis int          `json:"search_basis"` // as passed to the stream; 0: the pixels
	N1          int          `json:"n1"`
	N2          int          `json:"n2"`
	Wall        [][2]float64 `json:"wall_seconds"` // per run: the N1 and the N2 run
	CPU         [][2]float64 `json:"cpu_seconds"`
	PerSecond   []float64    `json:"records_per_second"`     // per run: (N2 − N1)/(t2 − t1), wall
	PerCPU      []float64    `json:"records_per_cpu_second"` // the same in CPU seconds
	Accuracy    float64      `json:"accuracy"`               // prequential, of the last N2 run
}

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "windowcurve:", err)
		os.Exit(1)
	}
}

func run() error {
	home, _ := os.UserHomeDir()
	mnist := flag.String("mnist", filepath.Join(home, ".cache", "nmfstream-data", "mnist"), "folder of the MNIST IDX files")
	windows := flag.String("windows", "1000,3000,10000,30000,100000", "comma-separated window sizes W")
	basis := flag.Int("search-basis", 40, "the stream's --search-basis (0: the pixels searched)")
	lead := flag.Int("a", 2000, "records of the full window before the steady state's first run ends (N1 ≥ W + a)")
	span := flag.Int("b", 16000, "records between the two runs' ends (N2 = N1 + b)")
	runs := flag.Int("runs", 1, "pairs of runs per window")
	seed := flag.Uint64("seed", 1, "seed of the labeled tenth")
	bin := flag.String("bin", "", "the nmfstream binary (default: built from this checkout)")
	png := flag.String("png", "", "draw the rates against W to this PNG `file`")
	jsonOut := flag.String("json", "", "write the runs to this JSON `file`")
	replot := flag.String("replot", "", "draw --png from these comma-separated JSON `files` of earlier runs instead of measuring")
	flag.Parse()
	if *replot != "" {
		if *png == "" {
			return errors.New("--replot needs --png")
		}
		var curves [][]result
		for _, p := range strings.Split(*replot, ",") {
			var rs []result
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			if err := json.Unmarshal(b, &rs); err != nil {
				return fmt.Errorf("%s: %w", p, err)
			}
			if len(rs) == 0 {
				return fmt.Errorf("%s: no windows", p)
			}
			curves = append(curves, rs)
		}
		return draw(*png, curves)
	}
	if *runs <= 0 || *lead <= 0 || *span <= 0 || *basis < 0 {
		return errors.New("--runs, --a and --b must be positive and --search-basis not negative")
	}
	var ws []int
	for _, s := range strings.Split(*windows, ",") {
		w, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || w <= 0 {
			return fmt.Errorf("--windows: bad window %q", s)
		}
		ws = append(ws, w)
	}
	x, y, err := sources.ReadMNIST(*mnist, 60000)
	if err != nil {
		return err
	}
	total := 2 * x.RawMatrix().Rows
	ranges := make([][2]int, len(ws))
	for i, w := range ws {
		n1, n2 := steadyRange(w, *lead, *span, *basis > 0)
		if n2 > total {
			return fmt.Errorf("window %d: the steady state needs %d records, the stream has %d (smaller --a or --b)", w, n2, total)
		}
		ranges[i] = [2]int{n1, n2}
	}
	if *bin == "" {
		tmp, err := os.MkdirTemp("", "windowcurve")
		if err != nil {
			return err
		}
		defer os.RemoveAll(tmp)
		*bin = filepath.Join(tmp, "nmfstream")
		if out, err := exec.Command("go", "build", "-o", *bin, "./cmd/nmfstream").CombinedOutput(); err != nil {
			return fmt.Errorf("go build ./cmd/nmfstream (run from the repository's root): %v\n%s", err, out)
		}
	}
	lab := labeled(total, *seed)
	var results []result
	for i, w := range ws {
		r := result{Window: w, SearchBasis: *basis, N1: ranges[i][0], N2: ranges[i][1]}
		for range *runs {
			var wall, cpu [2]float64
			for j, n := range []int{r.N1, r.N2} {
				if wall[j], cpu[j], r.Accuracy, err = stream(*bin, x, y, lab, n, w, *basis); err != nil {
					return fmt.Errorf("window %d, %d records: %w", w, n, err)
				}
			}
			d := float64(r.N2 - r.N1)
			r.Wall, r.CPU = append(r.Wall, wall), append(r.CPU, cpu)
			r.PerSecond = append(r.PerSecond, d/(wall[1]-wall[0]))
			r.PerCPU = append(r.PerCPU, d/(cpu[1]-cpu[0]))
			fmt.Fprintf(os.Stderr, "W = %d: %d → %d records in %.1f → %.1f s wall, %.1f → %.1f s CPU: %.0f records/s, %.0f records/CPU-s\n",
				w, r.N1, r.N2, wall[0], wall[1], cpu[0], cpu[1], r.PerSecond[len(r.PerSecond)-1], r.PerCPU[len(r.PerCPU)-1])
		}
		results = append(results, r)
	}
	printTable(os.Stdout, results)
	if *jsonOut != "" {
		b, err := json.MarshalIndent(results, "", "\t")
		if err != nil {
			return err
		}
		if err := os.WriteFile(*jsonOut, append(b, '\n'), 0o644); err != nil {
			return err
		}
	}
	if *png != "" {
		return draw(*png, [][]result{results})
	}
	return nil
}

// steadyRange returns the record counts N1 < N2 = N1 + b of a window W's
// two runs: N1 = W + a, moved to a records past any refit of the search
// basis (when withBasis) that would fall in (N1 − a/2, N2], so that
// neither the window's filling nor a refit is timed in the difference.
func steadyRange(w, a, b int, withBasis bool) (n1, n2 int) {
	n1 = w + a
	if !withBasis {
		return n1, n1 + b
	}
	for r := refitFirst; r <= n1+b; r *= 4 {
		if r > n1-a/2 {
			n1 = r + a
		}
	}
	return n1, n1 + b
}

// streamRow writes the i-th sample of the stream into dst (len 784): for
// i < n (x's rows) the image x[i], for n ≤ i < 2n the image x[i−n]
// shifted right by one pixel, its first column zero.
func streamRow(x *mat.Dense, i int, dst []float32) {
	n, d := x.Dims()
	if i < n {
		for p, v := range x.RawRowView(i) {
			dst[p] = float32(v)
		}
		return
	}
	src := x.RawRowView(i - n)
	for p := range d {
		if p%28 == 0 {
			dst[p] = 0
		} else {
			dst[p] = float32(src[p-1])
		}
	}
}

// labeled marks a seeded tenth (total/10) of the stream's total samples
// as labeled on arrival.
func labeled(total int, seed uint64) []bool {
	rng := rand.New(rand.NewPCG(seed, 30))
	out := make([]bool, total)
	for _, i := range rng.Perm(total)[:total/10] {
		out[i] = true
	}
	return out
}

// writeStream writes the stream's first n samples to w as an Arrow IPC
// stream in batches of 1,000: x (fixed_size_list<float32>[784]), label
// (int64, the digit y[i mod 60,000] where lab[i], else null) and id
// (int64, i).
func writeStream(w io.Writer, x *mat.Dense, y []int, lab []bool, n int) error {
	rows, d := x.Dims()
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "x", Type: arrow.FixedSizeListOf(int32(d), arrow.PrimitiveTypes.Float32), Nullable: true},
		{Name: "label", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
		{Name: "id", Type: arrow.PrimitiveTypes.Int64},
	}, nil)
	mem := memory.NewGoAllocator()
	sw := ipc.NewWriter(w, ipc.WithSchema(schema), ipc.WithAllocator(mem))
	b := array.NewRecordBuilder(mem, schema)
	defer b.Release()
	xb := b.Field(0).(*array.FixedSizeListBuilder)
	vb := xb.ValueBuilder().(*array.Float32Builder)
	lb, ib := b.Field(1).(*array.Int64Builder), b.Field(2).(*array.Int64Builder)
	row := make([]float32, d)
	for start := 0; start < n; start += 1000 {
		for i := start; i < min(n, start+1000); i++ {
			streamRow(x, i, row)
			xb.Append(true)
			vb.AppendValues(row, nil)
			if lab[i] {
				lb.Append(int64(y[i%rows]))
			} else {
				lb.AppendNull()
			}
			ib.Append(int64(i))
		}
		rec := b.NewRecord()
		err := sw.Write(rec)
		rec.Release()
		if err != nil {
			sw.Close()
			return err
		}
	}
	return sw.Close()
}

// stream runs `bin stream --in - --window w` on the stream's first n
// samples and returns its wall seconds (from start to exit), its CPU
// seconds (user + system) and its prequential accuracy.
func stream(bin string, x *mat.Dense, y []int, lab []bool, n, w, basis int) (wall, cpu, accuracy float64, err error) {
	cmd := exec.Command(bin, "stream", "--in", "-", "--json", "--window", strconv.Itoa(w), "--search-basis", strconv.Itoa(basis))
	cmd.Stderr = os.Stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		return 0, 0, 0, err
	}
	var out strings.Builder
	cmd.Stdout = &out
	start := time.Now()
	if err := cmd.Start(); err != nil {
		return 0, 0, 0, err
	}
	werr := writeStream(in, x, y, lab, n)
	if cerr := in.Close(); werr == nil {
		werr = cerr
	}
	err = cmd.Wait()
	wall = time.Since(start).Seconds()
	if err != nil {
		return 0, 0, 0, err
	}
	if werr != nil {
		return 0, 0, 0, fmt.Errorf("writing the stream: %w", werr)
	}
	var s struct {
		Accuracy float64 `json:"accuracy"`
		Records  int     `json:"records"`
	}
	if err := json.Unmarshal([]byte(out.String()), &s); err != nil {
		return 0, 0, 0, fmt.Errorf("stream's summary %q: %w", out.String(), err)
	}
	if s.Records != n {
		return 0, 0, 0, fmt.Errorf("stream read %d records, want %d", s.Records, n)
	}
	ru := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	cpu = time.Duration(ru.Utime.Nano() + ru.Stime.Nano()).Seconds()
	return wall, cpu, s.Accuracy, nil
}

func median(xs []float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// printTable prints the medians per window, their range over the runs
// and each window's ratio to the 10,000 window's (when measured).
func printTable(w io.Writer, rs []result) {
	var ref *result
	for i := range rs {
		if rs[i].Window == 10000 {
			ref = &rs[i]
		}
	}
	fmt.Fprintf(w, "| W | N1 → N2 | records/s (range) | records/CPU-s (range) | ÷ 10k, wall | ÷ 10k, CPU | prequential accuracy at N2 |\n|---|---|---|---|---|---|---|\n")
	for _, r := range rs {
		ratio := func(v, r0 []float64) string {
			if ref == nil {
				return "–"
			}
			return fmt.Sprintf("%.2f", median(v)/median(r0))
		}
		var rw, rc string
		if ref != nil {
			rw, rc = ratio(r.PerSecond, ref.PerSecond), ratio(r.PerCPU, ref.PerCPU)
		} else {
			rw, rc = "–", "–"
		}
		fmt.Fprintf(w, "| %d | %d → %d | %.0f (%.0f–%.0f) | %.0f (%.0f–%.0f) | %s | %s | %.4f |\n",
			r.Window, r.N1, r.N2, median(r.PerSecond), slices.Min(r.PerSecond), slices.Max(r.PerSecond),
			median(r.PerCPU), slices.Min(r.PerCPU), slices.Max(r.PerCPU), rw, rc, r.Accuracy)
	}
}

// draw plots each curve's median records/s (solid) and records per CPU
// second (dashed) against W, log–log.
func draw(path string, curves [][]result) error {
	var ss []figure.Series
	for k, rs := range curves {
		space := "search basis " + strconv.Itoa(rs[0].SearchBasis)
		if rs[0].SearchBasis == 0 {
			space = "pixels"
		}
		for m, measure := range []string{"records/s", "records/CPU-s"} {
			s := figure.Series{Name: space + ", " + measure, Style: k, Dashed: m == 1}
			for _, r := range rs {
				s.X = append(s.X, float64(r.Window))
				if m == 0 {
					s.Y = append(s.Y, median(r.PerSecond))
				} else {
					s.Y = append(s.Y, median(r.PerCPU))
				}
			}
			ss = append(ss, s)
		}
	}
	return figure.Line(path, "MNIST stream, steady state (N2 − N1)/(t2 − t1)", "window W (samples)", "records per second", ss, true, true)
}
