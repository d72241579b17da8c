package distributed

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// The chain's two ordered consumers (an owner's batches, a driver's
// answers) reset themselves on a gap or a missed heartbeat, but not on
// everything a NATS node's loss does to them: measured on a 3-node cluster,
// killing the node that served one left it either ending with an error or
// waiting without one while the stream went on elsewhere. Both readers
// therefore make their consumer anew, from the message after the last one
// they read, when it fails or stays silent for staleAfter while a message
// is due (Receive is called only for a batch sent; an owner's partition
// may be idle, so an owner waits longer, idleAfter). Making a consumer anew
// loses nothing and repeats nothing: it starts after the last sequence
// read, and both readers drop what they already hold.
const (
	staleAfter = 5 * time.Second
	idleAfter  = 15 * time.Second
)

// orderedFrom returns the messages of stream's subject from the one after
// stream sequence after (from the first if after is 0), on a new ordered
// consumer.
func orderedFrom(ctx context.Context, js jetstream.JetStream, stream, subject string, after uint64) (jetstream.MessagesContext, error) {
	cfg := jetstream.OrderedConsumerConfig{MaxResetAttempts: maxResets, FilterSubjects: []string{subject}}
	if after > 0 {
		cfg.DeliverPolicy, cfg.OptStartSeq = jetstream.DeliverByStartSequencePolicy, after+1
	}
	actx, cancel := context.WithTimeout(ctx, attemptWithin)
	defer cancel()
	cons, err := js.OrderedConsumer(actx, stream, cfg)
	if err != nil {
		return nil, err
	}
	return cons.Messages()
}

// next returns the driver's next answer, making its consumer anew (from
// the answer after the last one read) when it fails or is silent for
// staleAfter; it returns an error only when ctx ends, or when the consumer
// fails and cannot be made anew within createWithin.
func (d *ChainDriver) next(ctx context.Context) (jetstream.Msg, error) {
	var b backoff
	for {
		wctx, cancel := context.WithTimeout(ctx, staleAfter)
		m, err := d.it.Next(jetstream.NextContext(wctx))
		cancel()
		if err == nil {
			if md, merr := m.Metadata(); merr == nil {
				d.seq = md.Sequence.Stream
			}
			return m, nil
		}
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		if !errors.Is(err, context.DeadlineExceeded) && !b.pause(ctx) { // a failure, not a silence
			return nil, err
		}
		if it, err := orderedFrom(ctx, d.js, d.n.predStream(), d.n.predSubject(d.name), d.seq); err == nil {
			d.it.Stop()
			d.it = it
		}
	}
}

// republish publishes msg again under its message id after its
// asynchronous publish failed with err (a stream without a leader for a
// while after a node's loss answers "no response from stream"), retrying
// with backoff: the id makes a batch stored twice count once. It returns
// the last error if none succeeds.
func (d *ChainDriver) republish(ctx context.Context, msg *nats.Msg, id string, err error) error {
	var b backoff
	if !b.pause(ctx) {
		return err
	}
	return retry(ctx, func(ctx context.Context) error {
		_, err := d.js.PublishMsg(ctx, msg, jetstream.WithMsgID(id))
		return err
	})
}

// ChainPosition is how far a driver got: enough for another process to
// resume it after a crash (ResumeChainDriver) without a batch learned
// twice or an answer lost. It is plain data, for the caller's checkpoint.
type ChainPosition struct {
	// Driver is the driver's name, which keys its batches and answers.
	Driver string
	// Next is the number of batches whose answers were received (and, for
	// a checkpoint, written): the resumed driver publishes from it.
	Next int64
	// AnswerSeq is a stream sequence of the answers stream such that every
	// answer of a batch from Next on comes after it.
	AnswerSeq uint64
	// AnchoredAt is the first batch the driver routed by the namespace's
	// anchors (distributed/DESIGN.md, "Locality"), −1 if none yet. A
	// driver that fixed its anchors after Next, among the batches it sent
	// but had not written the answers of, is resumed routing those by
	// anchor where it had routed some by id: `stream --nats` fixes them
	// before its first batch, so its AnchoredAt is 0 or −1.
	AnchoredAt int64
}

// Position returns the driver's position after the batches Receive has
// returned. Call it from Receive's goroutine.
func (d *ChainDriver) Position() ChainPosition {
	seq := d.seq
	for _, s := range d.gotSeq { // answers of later batches read already
		seq = min(seq, s-1)
	}
	return ChainPosition{Driver: d.name, Next: d.want, AnswerSeq: seq, AnchoredAt: d.anchoredAt.Load()}
}

// ResumeChainDriver returns a driver that continues the one at pos (a
// driver of cfg's namespace that stopped, e.g. killed with its process):
// the same name, and batch numbers from 0 again. The caller sends the
// same batches, from the first, as the stopped driver did: Send routes
// those before pos.Next without publishing them (the router's state then
// is the stopped driver's) and Receive returns them Skipped; from
// pos.Next on Send publishes, and an owner that learned a batch already
// (the stopped driver had sent it before its answer was written) does not
// learn it again, while Receive reads its answer from the stream. The
// settings must be the namespace's, as for NewChainDriver.
func ResumeChainDriver(ctx context.Context, nc *nats.Conn, cfg Config, settings []byte, pos ChainPosition) (*ChainDriver, error) {
	if pos.Driver == "" || pos.Next < 0 {
		return nil, fmt.Errorf("distributed: resuming a driver: position without a name or with %d batches", pos.Next)
	}
	return newChainDriver(ctx, nc, cfg, settings, pos)
}
