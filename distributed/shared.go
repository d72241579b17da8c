package distributed

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/nats-io/nats.go/jetstream"
)

// sharedPrefix prefixes the model bucket's keys of Publisher.UpdateShared,
// apart from the learner's own ("u", "partitioner").
const sharedPrefix = "shared."

// sharedAttempts bounds the compare-and-set attempts of one UpdateShared:
// each failure means another publisher wrote in between, so this many in a
// row means a storm of writers, not bad luck.
const sharedAttempts = 100

// UpdateShared replaces the value of the namespace's shared key with
// f(old) atomically: it reads the value (old is nil if there is none),
// calls f, and writes f's result with a compare-and-set on the revision it
// read, calling f again on the newer value when another writer came in
// between. Every publisher of a namespace that updates a key this way sees
// a linear history of its values, each computed from the one before.
// If f returns write false, nothing is written and UpdateShared returns.
// f may be called more than once and must not keep side effects of a call
// whose write was refused. key is letters, digits, '-' and '_'; the value
// must fit in a message of the server (max_payload).
func (p *Publisher) UpdateShared(ctx context.Context, key string, f func(old []byte) (value []byte, write bool, err error)) error {
	if key == "" || strings.IndexFunc(key, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_')
	}) >= 0 {
		return fmt.Errorf("distributed: shared key %q: only letters, digits, '-' and '_'", key)
	}
	name := sharedPrefix + key
	for range sharedAttempts {
		var old []byte
		var rev uint64
		e, err := p.st.model.Get(ctx, name)
		switch {
		case errors.Is(err, jetstream.ErrKeyNotFound):
		case err != nil:
			return fmt.Errorf("distributed: shared key %s: %w", key, err)
		default:
			old, rev = e.Value(), e.Revision()
		}
		value, write, err := f(old)
		if err != nil || !write {
			return err
		}
		if rev == 0 {
			_, err = p.st.model.Create(ctx, name, value)
		} else {
			_, err = p.st.model.Update(ctx, name, value, rev)
		}
		if err == nil {
			return nil
		}
		if !errors.Is(err, jetstream.ErrKeyExists) && !isWrongLast(err) {
			return fmt.Errorf("distributed: shared key %s: %w", key, err)
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
	}
	return fmt.Errorf("distributed: shared key %s: %d writers in a row came first", key, sharedAttempts)
}
