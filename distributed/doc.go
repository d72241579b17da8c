// Package distributed runs nmfstream's learning on NATS JetStream, in two
// forms.
//
// # The chain on the owners
//
// A ChainDriver (stream --nats, serve --nats) sends each batch of a
// stream, as the stages.Features its featurize stage made, to the owners
// of the namespace's partitions, and receives their answers in batch
// order; each owner (a Worker made by NewChainWorker) runs a
// stages.Learner, built from the namespace's learner settings (NewLearner),
// on its partition's share of every batch (Router: dense samples by their
// nearest anchor, fixed once per namespace; other records by PartitionOf).
// With one partition the predictions are those of the single-machine
// stream, byte for byte. chain.go and DESIGN.md ("The chain on the
// owners") give the messages, the failover (a new owner replays the
// partition's batches) and what is not exact with several partitions.
//
// # The owners' own GNMF step
//
// A Worker made by NewWorker (nmfstream worker without --chain) runs the
// factorization as many cooperating instances: samples are published to a replicated
// stream, split into virtual partitions by a locality-preserving key, and
// each partition has one exclusive owner at a time, which holds the
// partition's samples and codes V and publishes additive deltas of the
// sufficient statistics B = XV (D×K) and A = VᵀV (K×K). One coordinator,
// itself an exclusive role with failover, sums the deltas exactly once and
// steps the basis U, which it versions in a key-value bucket that every
// instance watches. DESIGN.md in this directory (distributed/DESIGN.md) gives the math (what is
// exact and what is approximate) and the message flow.
//
// # Roles and exclusivity
//
// Each of the P partitions and the coordinator is a role. Every Worker
// competes for every role through a pinned pull consumer (JetStream's
// priority groups, policy "pinned") on a stream of heartbeat ticks: the
// server delivers a role's ticks to one client only, and moves the pin to
// another when that client stops pulling for Config.PinnedTTL. A worker
// that holds a pin does the role's work; what it publishes goes through a
// compare-and-set (the expected last sequence of the partition's delta
// subject, the revision of the basis key), so a worker that lost its pin
// without knowing it cannot publish, and a new owner rebuilds the role's
// state from the logs before it works.
//
// # Exactly once
//
// A delta carries its partition's delta number n (1, 2, …) and is
// published with the message id "<p>.<n>" (JetStream's duplicate window
// drops a retried publish) and the expected last sequence of its subject
// (a second writer is refused). The coordinator applies delta (p, n) only
// if n is one past the last it applied from p, and counts the samples each
// delta adds, so that the count of applied samples equals the count of
// published samples however owners and the coordinator fail over.
//
// # Rounds and staleness
//
// Owners work in rounds. In round r an owner takes the samples of its
// partition up to the sample sequence the basis version r names, codes
// them on U, sweeps its codes once and publishes one delta. The
// coordinator steps U to version r+1 once every partition's delta of round
// r is in. An owner starts round r only when U's version is at least
// r − Staleness: with Staleness zero the rounds are synchronous and U is
// the single-machine multiplicative update's to rounding; with Staleness
// s an owner runs up to s rounds ahead of the slowest partition.
//
// # Graph, window and labels
//
// With Config.Alpha positive, each owner learns GNMF on the exact k-NN
// graph of its partition's samples (edges between partitions are
// dropped); U's step reads only B and A, so the deltas stay exact sums.
// With Config.Window, an owner keeps its partition's last Window samples,
// and the delta of a round subtracts the part of B and A of those that
// leave. Owners hold the samples' labels, late ones included
// (Publisher.Label); they predict nothing (the chain's owners do).
//
// # Sparse samples
//
// A sparse Sample (a document's hashed TF-IDF row, which the publisher
// computes: the owners share no vocabulary) stays sparse on the wire, in
// its owner's window, V sweeps and k-NN graph (cosine), and in the
// deltas, which carry only the rows of ΔB at the features the round's
// samples have. B and U at the coordinator are dense D×K.
//
// # Large messages
//
// A basis or delta larger than the server's max_payload travels through
// the object store; the message carries the object's name and checksum.
//
// # Concurrency
//
// Worker.Run starts one goroutine per role and per watcher and returns
// when its context is cancelled, after all of them have ended. Publisher
// is safe for concurrent use; a ChainDriver's Send and Receive may run on
// two goroutines, one each.
package distributed
