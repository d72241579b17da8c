package distributed

import (
	"context"
	"errors"
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
