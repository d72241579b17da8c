package pipeline

import (
	"errors"
	"fmt"
	"reflect"
)

// RejectError marks a per-item data error: the item is counted as rejected,
// handed to the pipeline's Rejects sink, and the stream continues. Create one
// with Reject; test for one with errors.As.
type RejectError struct {
	// Err is the reason the item was rejected. It is never nil.
	Err error
}

// Error returns "rejected: " followed by the reason.
func (e *RejectError) Error() string { return "rejected: " + e.Err.Error() }

// Unwrap returns the reason, so errors.Is sees through a rejection.
func (e *RejectError) Unwrap() error { return e.Err }

// Reject wraps err so that a source, stage or sink that returns it rejects
// the current item instead of failing the run. Reject(nil) returns nil, so
// `return out, pipeline.Reject(validate(x))` reads naturally.
//
// A plain (non-Reject) error is fatal: it stops the whole run. Use Reject for
// errors the data can cause (a negative pixel, an undecodable image, an empty
// document) and plain errors for everything else (I/O, broken invariants).
// The wrapper may itself be wrapped: errors.As finds it anywhere in the chain.
func Reject(err error) error {
	if err == nil {
		return nil
	}
	return &RejectError{Err: err}
}

// Rejection describes one rejected item. It is the item type of the
// pipeline's Rejects sink.
type Rejection struct {
	// Stage is the name of the source, stage or sink that rejected the item.
	Stage string
	// Item is the value that stage was given: a stage's or sink's input, or,
	// for a source, whatever value the source returned along with the error
	// (often the zero value). The pipeline does not copy it.
	Item any
	// Err is the reason, as passed to Reject (the RejectError is unwrapped).
	Err error
}

// TypeError reports an item whose dynamic type does not match what a stage
// or sink takes. The pipeline checks the declared types of neighbouring steps
// once, when Run starts; when a step declares an interface output (such as
// any), the remaining check is made per item, and a mismatch fails the run
// with a *TypeError instead of panicking.
type TypeError struct {
	// Got is the type produced upstream (nil for a nil interface value).
	Got reflect.Type
	// Want is the input type the step declares.
	Want reflect.Type
}

// Error returns "type mismatch: got G, want W".
func (e *TypeError) Error() string {
	got := "nil"
	if e.Got != nil {
		got = e.Got.String()
	}
	return fmt.Sprintf("type mismatch: got %s, want %s", got, e.Want)
}

// isReject reports whether err carries a RejectError and returns its reason.
func isReject(err error) (error, bool) {
	var re *RejectError
	if errors.As(err, &re) {
		return re.Err, true
	}
	return nil, false
}

// as converts x to T with a checked type assertion. A nil interface value
// converts to the zero T when T is an interface type: the assertion alone
// would refuse it although the static types agree.
func as[T any](x any) (T, bool) {
	v, ok := x.(T)
	if !ok && x == nil {
		ok = reflect.TypeFor[T]().Kind() == reflect.Interface
	}
	return v, ok
}

// mismatch builds the *TypeError for x, which failed to convert to T.
func mismatch[T any](x any) error {
	return &TypeError{Got: reflect.TypeOf(x), Want: reflect.TypeFor[T]()}
}

// compatible reports whether values of static type out may be given to a
// step that takes in. It is true when out is assignable to in, and also when
// out is an interface type whose dynamic values might be assignable; in that
// case the per-item assertion decides.
func compatible(out, in reflect.Type) bool {
	if out.AssignableTo(in) {
		return true
	}
	if out.Kind() == reflect.Interface {
		return in.Kind() == reflect.Interface || in.Implements(out)
	}
	return false
}
