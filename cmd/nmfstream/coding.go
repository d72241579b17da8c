package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"

	"gonum.org/v1/gonum/mat"

	"github.com/nmfstream/nmfstream/model"
)

// codeFlags are the flags that project and classify share: both load a
// model and code an input file with it.
type codeFlags struct {
	model, in, out, projector, rejects *string
	csv                                *csvFlags
}

func bindCodeFlags(fs *flag.FlagSet) codeFlags {
	c := &csvFlags{}
	addCSVFlags(fs, c)
	return codeFlags{
		csv:       c,
		model:     fs.String("model", "", "fitted model `file` to read, written by fit --save (required)"),
		in:        fs.String("in", "", "input `file` (required; - for an Arrow stream on stdin)"),
		out:       fs.String("out", "", "output Arrow `file` (required)"),
		projector: fs.String("projector", "", "graph, nnls, clamped or pinv (default: the model's): how the samples are coded; the default image classifier predicts from the features, so it changes the predictions only with --codes only"),
		rejects:   fs.String("rejects", "", "write rejected records to this `file` (JSON lines)"),
	}
}

// load parses args, checks the required flags and loads the model.
func (f codeFlags) load(fs *flag.FlagSet, name string, args []string) (*model.Snapshot, model.Projection, error) {
	if err := parseFlags(fs, args); err != nil {
		return nil, 0, err
	}
	if fs.NArg() > 0 {
		return nil, 0, fmt.Errorf("%w: unexpected argument %q", errUsage, fs.Arg(0))
	}
	if *f.model == "" || *f.in == "" || *f.out == "" {
		return nil, 0, fmt.Errorf("%w: --model, --in and --out are required (see nmfstream %s -help)", errUsage, name)
	}
	if err := errors.Join(checkInput("--model", *f.model), checkInput("--in", *f.in),
		checkOutput("--out", *f.out), checkOutput("--rejects", *f.rejects)); err != nil {
		return nil, 0, err
	}
	snap, err := loadModel(*f.model)
	if err != nil {
		return nil, 0, err
	}
	proj := snap.Projection
	if *f.projector != "" {
		if proj, err = model.ParseProjection(*f.projector); err != nil {
			return nil, 0, fmt.Errorf("%w: --projector: %v", errUsage, err)
		}
	}
	return snap, proj, nil
}

// codeInput reads the input file, codes its records with the model and
// reports the rejected ones.
// A CSV input is read with the model's CSV columns where the command line
// gives none (csvFlags.fromModel).
func (f codeFlags) codeInput(ctx context.Context, snap *model.Snapshot, proj model.Projection, stderr io.Writer) (*input, *mat.Dense, error) {
	if took := f.csv.fromModel(snap.Params, *f.in); took != "" {
		fmt.Fprintf(stderr, "nmfstream: %s: the CSV columns the model was fitted with: %s\n", *f.in, took)
	}
	in, codes, err := codeFile(ctx, snap, proj, *f.in, f.csv.opener(os.Stdin), stderr)
	if in != nil {
		if rerr := reportRejects(stderr, in, *f.rejects, false); rerr != nil && err == nil {
			err = rerr
		}
	}
	return in, codes, err
}
