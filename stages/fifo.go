package stages

// fifo is a map from record id to a value that forgets its oldest entries
// beyond a bound, so that state kept per id stays flat on an endless stream.
type fifo[T any] struct {
	m    map[string]entry[T]
	q    []keyGen // insertion order; entries whose gen no longer matches are stale
	head int
	gen  uint64
}

type entry[T any] struct {
	v   T
	gen uint64
}

type keyGen struct {
	key string
	gen uint64
}

func (f *fifo[T]) init() { f.m = map[string]entry[T]{} }

func (f *fifo[T]) len() int { return len(f.m) }

// put sets key to v (as the newest entry), drops the oldest entries
// beyond limit, and returns how many it dropped.
func (f *fifo[T]) put(key string, v T, limit int) int {
	f.gen++
	f.m[key] = entry[T]{v, f.gen}
	f.q = append(f.q, keyGen{key, f.gen})
	dropped := 0
	for len(f.m) > limit {
		kg := f.q[f.head]
		f.head++
		if e, ok := f.m[kg.key]; ok && e.gen == kg.gen {
			delete(f.m, kg.key)
			dropped++
		}
	}
	f.compact()
	return dropped
}

// has reports whether key is held, changing nothing.
func (f *fifo[T]) has(key string) bool {
	_, ok := f.m[key]
	return ok
}

// take removes key and returns its value.
func (f *fifo[T]) take(key string) (T, bool) {
	e, ok := f.m[key]
	if ok {
		delete(f.m, key)
		f.compact()
	}
	return e.v, ok
}

// compact drops the stale front of the queue and keeps the queue within
// twice the live entries.
func (f *fifo[T]) compact() {
	for f.head < len(f.q) {
		kg := f.q[f.head]
		if e, ok := f.m[kg.key]; ok && e.gen == kg.gen {
			break
		}
		f.head++
	}
	if f.head > 64 && f.head > len(f.q)/2 {
		f.q = append(f.q[:0], f.q[f.head:]...)
		f.head = 0
	}
	if len(f.q)-f.head > 2*len(f.m)+64 {
		live := f.q[:0]
		for _, kg := range f.q[f.head:] {
			if e, ok := f.m[kg.key]; ok && e.gen == kg.gen {
				live = append(live, kg)
			}
		}
		f.q, f.head = live, 0
	}
}

// items returns the live entries oldest first.
func (f *fifo[T]) items() (keys []string, vals []T) {
	for _, kg := range f.q[f.head:] {
		if e, ok := f.m[kg.key]; ok && e.gen == kg.gen {
			keys = append(keys, kg.key)
			vals = append(vals, e.v)
		}
	}
	return keys, vals
}
