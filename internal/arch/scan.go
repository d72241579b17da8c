package arch

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// Kind names what a Finding is: the behaviours that Goroutines, IO and
// DecoderFree restrict to named packages.
type Kind string

const (
	// Goroutine is a goroutine start: a go statement, a call of a method
	// named Go in a file that imports sync or golang.org/x/sync/errgroup
	// (sync.WaitGroup.Go, errgroup.Group.Go), time.AfterFunc, or an import
	// of go-streams (whose operators start goroutines when built).
	Goroutine Kind = "starts a goroutine"
	// IO is file, network or process I/O: an import of net, net/…,
	// syscall, os/signal, io/ioutil or a NATS client or server, or a use
	// of package os other than its pure names (os.Getenv, os.ErrNotExist,
	// os.FileMode, …; see pureOS), or one of filepath's functions that
	// read the file system. io/fs alone is not I/O: an fs.FS is opened by
	// whoever passes it in.
	IO Kind = "does I/O"
	// Decoder is the construction of a record decoder: a reader of JSON
	// values, CSV, lines, Arrow IPC or Parquet, gob, or images.
	Decoder Kind = "builds a decoder"
)

// A Finding is one place in a package's non-test Go files that does what
// its Kind says.
type Finding struct {
	Kind Kind
	// File is the file's path inside the scanned file system, Line its
	// 1-based line.
	File string
	Line int
	// Func is the enclosing top-level function, "Recv.Name" for a
	// method, or "" at package level.
	Func string
	// What is the construct, e.g. "go statement", "import net/http",
	// "os.Create", "json.NewDecoder".
	What string
}

func (f Finding) String() string {
	where := f.File + ":" + strconv.Itoa(f.Line)
	if f.Func != "" {
		where += " (" + f.Func + ")"
	}
	return fmt.Sprintf("%s %s: %s", where, f.Kind, f.What)
}

// pureOS are the names of package os that do no I/O: the environment,
// error values and predicates, and types that describe files without
// opening them.
var pureOS = map[string]bool{
	"Getenv": true, "LookupEnv": true, "Environ": true, "ExpandEnv": true, "Expand": true,
	"ErrNotExist": true, "ErrExist": true, "ErrPermission": true, "ErrClosed": true,
	"ErrDeadlineExceeded": true, "ErrInvalid": true, "ErrProcessDone": true,
	"IsNotExist": true, "IsExist": true, "IsPermission": true, "IsTimeout": true,
	"PathError": true, "LinkError": true, "SyscallError": true,
	"FileMode": true, "FileInfo": true, "ModePerm": true, "ModeDir": true,
	"PathSeparator": true, "PathListSeparator": true, "Getpagesize": true,
}

// ioImports are import paths (or prefixes ending in "/") whose import is
// I/O by itself.
var ioImports = []string{
	"net", "net/", "syscall", "golang.org/x/sys/unix", "golang.org/x/sys/windows", "os/signal", "io/ioutil",
	"github.com/nats-io/",
}

// fsFilepath are the functions of path/filepath that read the file system.
var fsFilepath = map[string]bool{
	"Walk": true, "WalkDir": true, "Glob": true, "EvalSymlinks": true, "Abs": true,
}

// decoders are the constructors, by import path and name, of readers of
// records: what cmd/ leaves to sources.
var decoders = map[string][]string{
	"encoding/json": {"NewDecoder"},
	"encoding/csv":  {"NewReader"},
	"encoding/gob":  {"NewDecoder"},
	"encoding/xml":  {"NewDecoder"},
	"bufio":         {"NewScanner"},
	"image":         {"Decode"},
	"image/png":     {"Decode"},
	"image/jpeg":    {"Decode"},
	"image/gif":     {"Decode"},
	"github.com/apache/arrow-go/v18/arrow/ipc":       {"NewReader", "NewFileReader"},
	"github.com/apache/arrow-go/v18/parquet/pqarrow": {"NewFileReader", "ReadTable"},
	"github.com/apache/arrow-go/v18/parquet/file":    {"NewParquetReader", "OpenParquetFile"},
}

func matchesImport(imp string, list []string) bool {
	for _, p := range list {
		if imp == p || strings.HasSuffix(p, "/") && strings.HasPrefix(imp, p) {
			return true
		}
	}
	return false
}

// ScanDir parses the non-test Go files of the directory dir of fsys (all
// of them whatever their build tags, so that every variant is checked,
// except generators marked //go:build ignore)
// and returns what they do of each Kind, sorted by file and line. A file
// that does not parse is an error naming it.
func ScanDir(fsys fs.FS, dir string) ([]Finding, error) {
	entries, err := fs.ReadDir(fsys, dir)
	if err != nil {
		return nil, err
	}
	fset := token.NewFileSet()
	var out []Finding
	for _, e := range entries {
		name := e.Name()
		if e.IsDir() || !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			continue
		}
		file := path.Join(dir, name)
		src, err := fs.ReadFile(fsys, file)
		if err != nil {
			return nil, err
		}
		f, err := parser.ParseFile(fset, file, src, parser.SkipObjectResolution|parser.ParseComments)
		if err != nil {
			return nil, fmt.Errorf("arch: %w", err)
		}
		if ignored(f) {
			continue // a generator run by go run, not part of the package
		}
		out = append(out, scanFile(fset, file, f)...)
	}
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].File != out[j].File {
			return out[i].File < out[j].File
		}
		return out[i].Line < out[j].Line
	})
	return out, nil
}

// ignored reports whether f carries the constraint //go:build ignore.
func ignored(f *ast.File) bool {
	for _, cg := range f.Comments {
		if cg.Pos() > f.Package {
			break
		}
		for _, c := range cg.List {
			if strings.TrimSpace(c.Text) == "//go:build ignore" {
				return true
			}
		}
	}
	return false
}

// scanFile returns the findings of one parsed file.
func scanFile(fset *token.FileSet, file string, f *ast.File) []Finding {
	var out []Finding
	add := func(k Kind, pos token.Pos, fn, what string) {
		out = append(out, Finding{Kind: k, File: file, Line: fset.Position(pos).Line, Func: fn, What: what})
	}
	// local name → import path, for the selectors below.
	names := map[string]string{}
	hasSync := false
	for _, is := range f.Imports {
		imp, _ := strconv.Unquote(is.Path.Value)
		local := path.Base(imp)
		if strings.HasPrefix(local, "v") && strings.Count(imp, "/") > 0 {
			if _, err := strconv.Atoi(local[1:]); err == nil { // .../v2
				local = path.Base(path.Dir(imp))
			}
		}
		if is.Name != nil {
			local = is.Name.Name
		}
		names[local] = imp
		switch {
		case imp == "sync" || imp == "golang.org/x/sync/errgroup":
			hasSync = true
		case strings.HasPrefix(imp, "github.com/reugn/go-streams"):
			add(Goroutine, is.Pos(), "", "import "+imp)
		case matchesImport(imp, ioImports):
			add(IO, is.Pos(), "", "import "+imp)
		}
	}
	for _, d := range f.Decls {
		fn := ""
		if fd, ok := d.(*ast.FuncDecl); ok {
			fn = fd.Name.Name
			if fd.Recv != nil && len(fd.Recv.List) > 0 {
				fn = recvName(fd.Recv.List[0].Type) + "." + fn
			}
		}
		ast.Inspect(d, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.GoStmt:
				add(Goroutine, n.Pos(), fn, "go statement")
			case *ast.CallExpr:
				sel, ok := n.Fun.(*ast.SelectorExpr)
				if !ok {
					return true
				}
				if sel.Sel.Name == "Go" && hasSync {
					add(Goroutine, n.Pos(), fn, "a call of "+exprString(sel.X)+".Go")
				}
				if id, ok := sel.X.(*ast.Ident); ok {
					imp := names[id.Name]
					if slices.Contains(decoders[imp], sel.Sel.Name) {
						add(Decoder, n.Pos(), fn, id.Name+"."+sel.Sel.Name)
					}
					if imp == "time" && sel.Sel.Name == "AfterFunc" {
						add(Goroutine, n.Pos(), fn, "time.AfterFunc")
					}
				}
			case *ast.SelectorExpr:
				id, ok := n.X.(*ast.Ident)
				if !ok {
					return true
				}
				switch names[id.Name] {
				case "os":
					if !pureOS[n.Sel.Name] {
						add(IO, n.Pos(), fn, "os."+n.Sel.Name)
					}
				case "path/filepath":
					if fsFilepath[n.Sel.Name] {
						add(IO, n.Pos(), fn, "filepath."+n.Sel.Name)
					}
				}
			}
			return true
		})
	}
	return out
}

// recvName is the type name of a method's receiver: T for T, *T, T[P].
func recvName(e ast.Expr) string {
	switch e := e.(type) {
	case *ast.StarExpr:
		return recvName(e.X)
	case *ast.IndexExpr:
		return recvName(e.X)
	case *ast.IndexListExpr:
		return recvName(e.X)
	case *ast.Ident:
		return e.Name
	}
	return "?"
}

// exprString renders a short selector chain (wg, s.group) for messages.
func exprString(e ast.Expr) string {
	switch e := e.(type) {
	case *ast.Ident:
		return e.Name
	case *ast.SelectorExpr:
		return exprString(e.X) + "." + e.Sel.Name
	case *ast.StarExpr:
		return "*" + exprString(e.X)
	}
	return "…"
}
