// Command dimcurve measures the stream's throughput against the dimension
// of its samples: the same MNIST images as streams of dense rows of D =
// s×s pixels (the 28×28 images resampled to s×s, nearest pixel) and of
// sparse rows of D columns (the 784 pixels placed at 784 distinct columns
// of D drawn at random, seeded: the same distances as the 784-pixel
// images, so only the storage and the search's cost change), each run
// through `nmfstream stream` with the defaults but the window, and prints
// records/s and records per CPU second (user + system of the child, which
// other tenants move less) with the prequential accuracy.
//
//	go run ./bench/dimcurve [--mnist DIR] [--n 4000] [--window 2000] [--dims 64,196,784,3136,1000s,10000s,100000s] [--runs 3] [--png dim.png] [--json dim.json] [--keep DIR]
//	go run ./bench/dimcurve --replot dim.json --png dim.png
//
// A dimension ending in s is sparse; a dense one must be a square. Each
// stream labels a tenth of its samples, with the sample (seeded). The
// runs of one dimension go back to back and the table gives their medians;
// the streams are written to a temporary folder, and nmfstream is built
// there from this checkout (or --bin). --png draws records/s against D
// (log–log), dense and sparse, with internal/figure.
package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"math"
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
	"github.com/apache/arrow/go/v15/arrow/memory"
	"gonum.org/v1/gonum/mat"

	"github.com/nmfstream/nmfstream/bench/internal/benchrun"
	"github.com/nmfstream/nmfstream/internal/figure"
	"github.com/nmfstream/nmfstream/sinks"
	"github.com/nmfstream/nmfstream/sources"
)

// result is one dimension's runs.
type result struct {
	Spec      string    `json:"spec"` // as --dims gives it
	D         int       `json:"d"`
	Sparse    bool      `json:"sparse"`
	N         int       `json:"n"`
	Window    int       `json:"window"`
	PerSecond []float64 `json:"records_per_second"`
	PerCPU    []float64 `json:"records_per_cpu_second"`
	Accuracy  float64   `json:"accuracy"`
}

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "dimcurve:", err)
		os.Exit(1)
	}
}

func run() error {
	mnist := flag.String("mnist", benchrun.DataDir("mnist"), "folder of the MNIST IDX files")
	n := flag.Int("n", 4000, "images per stream")
	window := flag.Int("window", 2000, "the stream's --window")
	dims := flag.String("dims", "64,196,784,3136,1000s,10000s,100000s", "comma-separated dimensions: s×s dense pixels, or D columns sparse with a trailing s")
	runs := flag.Int("runs", 3, "runs per dimension")
	bin := flag.String("bin", "", "the nmfstream binary (default: built from this checkout)")
	png := flag.String("png", "", "draw records/s against D to this PNG `file`")
	jsonOut := flag.String("json", "", "write the runs to this JSON `file`")
	replot := flag.String("replot", "", "draw --png from this JSON `file` of an earlier run instead of measuring")
	keep := flag.String("keep", "", "write the streams to this `folder` and keep them (default: a temporary folder, removed)")
	flag.Parse()
	if *replot != "" {
		var rs []result
		b, err := os.ReadFile(*replot)
		if err != nil {
			return err
		}
		if err := json.Unmarshal(b, &rs); err != nil {
			return fmt.Errorf("%s: %w", *replot, err)
		}
		if *png == "" || len(rs) == 0 {
			return errors.New("--replot needs --png and a file of at least one dimension")
		}
		return draw(*png, rs)
	}
	if *n <= 0 || *window <= 0 || *runs <= 0 {
		return errors.New("--n, --window and --runs must be positive")
	}
	tmp, err := os.MkdirTemp("", "dimcurve")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	if *bin == "" {
		if *bin, err = benchrun.BuildNmfstream(tmp); err != nil {
			return err
		}
	}
	x, y, err := sources.ReadMNIST(*mnist, *n)
	if err != nil {
		return err
	}
	var results []result
	for _, spec := range strings.Split(*dims, ",") {
		r := result{Spec: spec, N: *n, Window: *window}
		if r.D, r.Sparse, err = parseDim(spec); err != nil {
			return err
		}
		dir := tmp
		if *keep != "" {
			dir = *keep
		}
		path := filepath.Join(dir, "d"+spec+".arrow")
		if err := writeStream(path, x, y, r.D, r.Sparse); err != nil {
			return err
		}
		for range *runs {
			ps, pc, acc, err := stream(*bin, path, *window, *n)
			if err != nil {
				return fmt.Errorf("D = %s: %w", spec, err)
			}
			r.PerSecond, r.PerCPU, r.Accuracy = append(r.PerSecond, ps), append(r.PerCPU, pc), acc
		}
		fmt.Fprintf(os.Stderr, "D = %s: %.0f records/s\n", spec, benchrun.Median(r.PerSecond))
		results = append(results, r)
	}
	fmt.Printf("| D | rows | records/s | records/CPU-s | prequential accuracy |\n|---|---|---|---|---|\n")
	for _, r := range results {
		kind := "dense"
		if r.Sparse {
			kind = "sparse"
		}
		fmt.Printf("| %d | %s | %.0f | %.0f | %.4f |\n", r.D, kind, benchrun.Median(r.PerSecond), benchrun.Median(r.PerCPU), r.Accuracy)
	}
	if *jsonOut != "" {
		if err := benchrun.WriteJSON(*jsonOut, results); err != nil {
			return err
		}
	}
	if *png != "" {
		return draw(*png, results)
	}
	return nil
}

// parseDim reads a dimension of --dims: "784" dense (a square), "1000s"
// sparse (at least 784 columns).
func parseDim(spec string) (d int, sparse bool, err error) {
	num, sparse := strings.CutSuffix(spec, "s")
	d, err = strconv.Atoi(num)
	switch {
	case err != nil || d <= 0:
		return 0, false, fmt.Errorf("bad dimension %q", spec)
	case sparse && d < 784:
		return 0, false, fmt.Errorf("sparse dimension %d: the 784 pixels need at least 784 columns", d)
	case !sparse && int(math.Sqrt(float64(d)))*int(math.Sqrt(float64(d))) != d:
		return 0, false, fmt.Errorf("dense dimension %d is not a square", d)
	}
	return d, sparse, nil
}

// writeStream writes the images x (labels y) as an Arrow IPC stream file of
// dimension d: dense rows x (fixed_size_list<float32>[d]) of the images
// resampled to √d×√d, or sparse rows (indices, values; dim in the schema's
// metadata) of their nonzero pixels at 784 seeded distinct columns of d.
// A seeded tenth of the samples carry their label; ids are the positions.
func writeStream(path string, x *mat.Dense, y []int, d int, sparse bool) error {
	n, _ := x.Dims()
	rng := rand.New(rand.NewPCG(1, uint64(d)))
	var fields []arrow.Field
	var md *arrow.Metadata
	if sparse {
		m := arrow.NewMetadata([]string{"dim"}, []string{strconv.Itoa(d)})
		md = &m
		fields = []arrow.Field{
			{Name: "indices", Type: arrow.ListOf(arrow.PrimitiveTypes.Int32), Nullable: true},
			{Name: "values", Type: arrow.ListOf(arrow.PrimitiveTypes.Float32), Nullable: true},
		}
	} else {
		fields = []arrow.Field{{Name: "x", Type: arrow.FixedSizeListOf(int32(d), arrow.PrimitiveTypes.Float32), Nullable: true}}
	}
	fields = append(fields,
		arrow.Field{Name: "label", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
		arrow.Field{Name: "id", Type: arrow.PrimitiveTypes.Int64})
	schema := arrow.NewSchema(fields, md)
	mem := memory.NewGoAllocator()
	b := array.NewRecordBuilder(mem, schema)
	defer b.Release()
	var col, order []int // sparse: pixel p goes to column col[p]; the pixels by column
	if sparse {
		col = rng.Perm(d)[:784]
		order = make([]int, 784)
		for p := range order {
			order[p] = p
		}
		slices.SortFunc(order, func(p, q int) int { return col[p] - col[q] })
	}
	side := int(math.Sqrt(float64(d)))
	labeled := rng.Perm(n)[:n/10]
	isLabeled := make([]bool, n)
	for _, i := range labeled {
		isLabeled[i] = true
	}
	lb := b.Field(len(fields) - 2).(*array.Int64Builder)
	ib := b.Field(len(fields) - 1).(*array.Int64Builder)
	for i := range n {
		row := x.RawRowView(i)
		if sparse {
			inb, vlb := b.Field(0).(*array.ListBuilder), b.Field(1).(*array.ListBuilder)
			iv, vv := inb.ValueBuilder().(*array.Int32Builder), vlb.ValueBuilder().(*array.Float32Builder)
			inb.Append(true)
			vlb.Append(true)
			for _, p := range order {
				if row[p] != 0 {
					iv.Append(int32(col[p]))
					vv.Append(float32(row[p]))
				}
			}
		} else {
			xb := b.Field(0).(*array.FixedSizeListBuilder)
			vb := xb.ValueBuilder().(*array.Float32Builder)
			xb.Append(true)
			for r := range side {
				for c := range side {
					vb.Append(float32(row[(r*28/side)*28+c*28/side]))
				}
			}
		}
		if isLabeled[i] {
			lb.Append(int64(y[i]))
		} else {
			lb.AppendNull()
		}
		ib.Append(int64(i))
	}
	rec := b.NewRecord()
	defer rec.Release()
	return sinks.WriteArrowFile(path, schema, mem, rec)
}

// stream runs `bin stream` on the file at path and returns its records per
// second (as the command reports them), its records per CPU second (n
// records over the child's user + system time) and its prequential
// accuracy.
func stream(bin, path string, window, n int) (perSecond, perCPU, accuracy float64, err error) {
	cmd := exec.Command(bin, "stream", "--in", path, "--json", "--window", strconv.Itoa(window))
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		return 0, 0, 0, err
	}
	var s struct {
		RecordsPerSecond float64 `json:"records_per_second"`
		Accuracy         float64 `json:"accuracy"`
		Records          int     `json:"records"`
	}
	if err := json.Unmarshal(out, &s); err != nil {
		return 0, 0, 0, fmt.Errorf("stream's summary %q: %w", out, err)
	}
	if s.Records != n {
		return 0, 0, 0, fmt.Errorf("stream read %d records, want %d", s.Records, n)
	}
	ru := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	cpu := time.Duration(ru.Utime.Nano() + ru.Stime.Nano()).Seconds()
	return s.RecordsPerSecond, float64(n) / cpu, s.Accuracy, nil
}

// draw plots the median records/s and records per CPU second against D,
// dense and sparse, log–log.
func draw(path string, rs []result) error {
	var ss []figure.Series
	for k, kind := range []string{"dense", "sparse"} {
		for m, measure := range []string{"records/s", "records/CPU-s"} {
			s := figure.Series{Name: kind + ", " + measure, Style: k, Dashed: m == 1}
			for _, r := range rs {
				if r.Sparse != (k == 1) {
					continue
				}
				s.X = append(s.X, float64(r.D))
				if m == 0 {
					s.Y = append(s.Y, benchrun.Median(r.PerSecond))
				} else {
					s.Y = append(s.Y, benchrun.Median(r.PerCPU))
				}
			}
			if len(s.X) > 0 {
				ss = append(ss, s)
			}
		}
	}
	title := fmt.Sprintf("stream of %d MNIST images, window %d", rs[0].N, rs[0].Window)
	return figure.Line(path, title, "dimension D", "records per second (median)", ss, true, true)
}
