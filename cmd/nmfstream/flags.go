package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/nmfstream/nmfstream/record"
	"github.com/nmfstream/nmfstream/sources"
)

// warnDeprecated says on stderr that a flag spelling is deprecated and what
// replaces it (docs/DESIGN.md §6: the old spellings work for one minor release).
func warnDeprecated(stderr io.Writer, cmd, old, replacement string) {
	fmt.Fprintf(stderr, "nmfstream %s: warning: %s is deprecated and will be removed: use %s (--model only names a fitted model that is read)\n", cmd, old, replacement)
}

// checkInput reports at start, before any work, an input that does not
// exist. "-" (standard input) and "" are not checked.
func checkInput(flagName, path string) error {
	if path == "" || path == "-" {
		return nil
	}
	if _, err := os.Stat(path); err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("%s %s: no such file or directory", flagName, path)
		}
		return fmt.Errorf("%s %s: %w", flagName, path, err)
	}
	return nil
}

// checkOutput reports at start, before any work, an output that could not
// be written at the end: a directory in its place, a missing directory, or
// one that refuses new files (checked by creating and removing a temporary
// file beside it, which is also how checkpoints are written). "" is not
// checked. "-" is standard output for --out (project, classify and
// stream write their results there) and refused for every other output
// (a model, checkpoint, rejects list, profile or figure), which would
// otherwise create a file called "-".
func checkOutput(flagName, path string) error {
	if path == "" || path == "-" && flagName == "--out" {
		return nil
	}
	if path == "-" {
		return fmt.Errorf("%w: %s -: %s writes a file, not standard output: name a file (./- for one called -)", errUsage, flagName, flagName)
	}
	if st, err := os.Stat(path); err == nil && st.IsDir() {
		return fmt.Errorf("%s %s: is a directory, want a file", flagName, path)
	}
	dir := filepath.Dir(path)
	f, err := os.CreateTemp(dir, ".nmfstream-check-*")
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("%s %s: directory %s does not exist", flagName, path, dir)
		}
		return fmt.Errorf("%s %s: cannot write there: %w", flagName, path, err)
	}
	name := f.Name()
	f.Close()
	os.Remove(name)
	if st, err := os.Stat(path); err == nil && st.Mode().IsRegular() {
		// An existing file is replaced: it must be writable (a checkpoint
		// is renamed over it, which the directory allows; a model or
		// results file is truncated, which the file must allow).
		f, err := os.OpenFile(path, os.O_WRONLY, 0)
		if err != nil {
			return fmt.Errorf("%s %s: cannot write it: %w", flagName, path, err)
		}
		f.Close()
	}
	return nil
}

// checkOutputDir reports at start, before any work, an output directory
// that could not be written at the end: a file in its place (or in place
// of one of its parents), or a directory that refuses new files. A missing
// directory is created at the end with its parents.
func checkOutputDir(flagName, path string) error {
	if path == "" {
		return nil
	}
	p := path
	for {
		st, err := os.Stat(p)
		if err == nil && !st.IsDir() {
			return fmt.Errorf("%w: %s %s: %s is a file, want a directory (created if missing)", errUsage, flagName, path, p)
		}
		if err == nil {
			break
		}
		if !errors.Is(err, os.ErrNotExist) && !errors.Is(err, syscall.ENOTDIR) { // ENOTDIR: a parent is a file
			return fmt.Errorf("%s %s: %w", flagName, path, err)
		}
		parent := filepath.Dir(p)
		if parent == p {
			return fmt.Errorf("%s %s: %w", flagName, path, err)
		}
		p = parent
	}
	f, err := os.CreateTemp(p, ".nmfstream-check-*")
	if err != nil {
		return fmt.Errorf("%s %s: cannot write in %s: %w", flagName, path, p, err)
	}
	name := f.Name()
	f.Close()
	os.Remove(name)
	return nil
}

// isSet reports whether the flag name was given on the command line.
func isSet(fs *flag.FlagSet, name string) bool {
	set := false
	fs.Visit(func(f *flag.Flag) {
		if f.Name == name {
			set = true
		}
	})
	return set
}

// csvFlags are the CSV column flags of fit, eval, project, classify and
// stream (docs/DESIGN.md §6), and --max-dim, which applies to every input.
type csvFlags struct {
	label, id, text sources.Column
	unlabeled       string
	maxDim          int // --max-dim (maxDimFlag), for every input format
}

func addCSVFlags(fs *flag.FlagSet, c *csvFlags) {
	col := func(dst *sources.Column) func(string) error {
		return func(s string) error {
			v, err := sources.ParseColumn(s)
			if err != nil {
				return err
			}
			*dst = v
			return nil
		}
	}
	fs.Func("label-column", "CSV: the label column, by header `NAME` or position N from 1 (default: the header column \"label\"; without one, no labels)", col(&c.label))
	fs.Func("id-column", "CSV: the id column, by header `NAME` or position N from 1 (default: the header column \"id\"; without one, ids are row numbers from 0)", col(&c.id))
	fs.Func("text-column", "CSV: a column of documents, by header `NAME` or position N from 1: the records are documents (TF-IDF), other columns but label and id are ignored (default: the header column \"text\")", col(&c.text))
	fs.StringVar(&c.unlabeled, "unlabeled", "", "CSV: a label `value` that means unlabeled, besides the empty field (e.g. -1)")
	maxDimFlag(fs, &c.maxDim)
}

// opener returns the Opener of an input with these CSV options.
func (c csvFlags) opener(stdin io.Reader) sources.Opener {
	return sources.Opener{Stdin: stdin, LabelColumn: c.label, IDColumn: c.id, TextColumn: c.text, Unlabeled: c.unlabeled, MaxDim: c.maxDim}
}

// csvOnly reports CSV options given for an input that is not CSV, which
// would otherwise be ignored silently.
func csvOnly(o sources.Opener, path string) error {
	if o.LabelColumn == (sources.Column{}) && o.IDColumn == (sources.Column{}) && o.TextColumn == (sources.Column{}) && o.Unlabeled == "" {
		return nil
	}
	base := strings.TrimSuffix(strings.ToLower(path), ".gz")
	if strings.HasSuffix(base, ".csv") {
		return nil
	}
	return fmt.Errorf("%w: %s is not a CSV file (.csv, .csv.gz): --label-column, --id-column, --text-column and --unlabeled apply to CSV inputs only (Arrow and Parquet name their columns label, id and text)", errUsage, path)
}

// openStream opens the input of stream (either form) in batches of batch
// records, after checking that CSV options name a CSV file.
func (c csvFlags) openStream(in string, batch int) (sources.Source, error) {
	opener := c.opener(os.Stdin)
	opener.BatchSize = batch
	if err := csvOnly(opener, in); err != nil {
		return nil, err
	}
	src, err := opener.Open(in)
	if err != nil {
		return nil, inputError(in, err) // the input named, as fit names it
	}
	return src, nil
}

// checkStart joins the start checks of a command (checkInput, checkOutput).
func checkStart(errs ...error) error { return errors.Join(errs...) }

// Keys of model.Snapshot.Params under which fit records the CSV columns
// it read the training file with, so that project and classify read a CSV
// of the same layout without the flags being repeated.
const (
	paramLabelColumn = "csv.label-column"
	paramIDColumn    = "csv.id-column"
	paramTextColumn  = "csv.text-column"
	paramUnlabeled   = "csv.unlabeled"
)

// columnString is the command-line spelling of a column ("" for none).
func columnString(c sources.Column) string {
	if c.Name != "" {
		return c.Name
	}
	if c.Index > 0 {
		return fmt.Sprint(c.Index)
	}
	return ""
}

// isCSV reports whether path names a CSV file (.csv, .csv.gz).
func isCSV(path string) bool {
	return strings.HasSuffix(strings.TrimSuffix(strings.ToLower(path), ".gz"), ".csv")
}

// saveColumns records in params the CSV columns of a training file read
// as CSV; other inputs record nothing.
func (c csvFlags) saveColumns(params map[string]string, path string) {
	if !isCSV(path) {
		return
	}
	for k, v := range map[string]string{paramLabelColumn: columnString(c.label), paramIDColumn: columnString(c.id),
		paramTextColumn: columnString(c.text), paramUnlabeled: c.unlabeled} {
		if v != "" {
			params[k] = v
		}
	}
}

// fromModel fills the CSV columns not given on the command line with those
// the model was fitted with (saveColumns), for a CSV input path, and
// returns the flags it took from the model, to be said on stderr ("" for
// none). Arrow and Parquet inputs name their columns and take none.
func (c *csvFlags) fromModel(params map[string]string, path string) string {
	if !isCSV(path) {
		return ""
	}
	var took []string
	fill := func(dst *sources.Column, key, flagName string) {
		if *dst != (sources.Column{}) || params[key] == "" {
			return
		}
		if col, err := sources.ParseColumn(params[key]); err == nil {
			*dst = col
			took = append(took, flagName+" "+params[key])
		}
	}
	fill(&c.text, paramTextColumn, "--text-column")
	fill(&c.label, paramLabelColumn, "--label-column")
	fill(&c.id, paramIDColumn, "--id-column")
	if c.unlabeled == "" && params[paramUnlabeled] != "" {
		c.unlabeled = params[paramUnlabeled]
		took = append(took, "--unlabeled "+c.unlabeled)
	}
	return strings.Join(took, " ")
}

// addPrecisionFlags registers --precision and its older spelling
// --float32 on fs, for the commands that run a batch fit (fit, eval,
// report): the precision of the products with dense X (model.Common.Float32).
func addPrecisionFlags(fs *flag.FlagSet, p *fitParams) {
	fs.StringVar(&p.precision, "precision", "auto", "precision of the products with dense data: auto (float32 when the input stores float32 or bytes: Arrow or Parquet float32 lists, IDX; float64 otherwise), float32 or float64")
	fs.BoolVar(&p.float32, "float32", false, "the same as --precision float32")
}

// checkPrecision validates --precision and --float32 together.
func checkPrecision(p fitParams) error {
	switch p.precision {
	case "", "auto", "float32":
	case "float64":
		if p.float32 {
			return fmt.Errorf("%w: --float32 is --precision float32, and --precision float64 was given too: give one", errUsage)
		}
	default:
		return fmt.Errorf("%w: --precision %q: want auto, float32 or float64", errUsage, p.precision)
	}
	return nil
}

// useFloat32 reports whether a batch fit of an input of precision in runs
// its products in float32: --float32 or --precision float32, or
// --precision auto ("" too) and a float32 input (record.Batch.Precision).
func (p fitParams) useFloat32(in record.Precision) bool {
	switch p.precision {
	case "float32":
		return true
	case "float64":
		return false
	}
	return p.float32 || in == record.Float32
}
