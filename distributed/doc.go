// Package distributed runs nmfstream's learning chain on NATS JetStream:
// the chain on the owners, the only distributed learner.
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
// stream, byte for byte. chain.go and DESIGN.md in this directory
// (distributed/DESIGN.md, "The chain on the owners") give the messages,
// the failover (a new owner replays the partition's batches) and what is
// not exact with several partitions.
//
// # Roles and exclusivity
//
// Each of the P partitions is a role. Every Worker competes for the roles
// through a pinned pull consumer (JetStream's priority groups, policy
// "pinned") on a stream of heartbeat ticks: the server delivers a role's
// ticks to one client only, and moves the pin to another when that client
// stops pulling for Config.PinnedTTL. A worker that holds a pin runs the
// partition's Learner. The roles spread over the live Workers (counted by
// their heartbeats, WorkerWatch): a Worker pulls a role it does not hold
// only under its share ⌈P/n⌉, and gives one up after holding more than its
// share for two TTLs.
//
// # Exactly once
//
// A driver's batch share is published with the message id
// "<driver>.<batch>.<p>" and an owner's answer with the same; an owner
// that replays a partition after a takeover republishes the answers
// already given, which JetStream's duplicate window drops, and the driver
// drops any second answer of (batch, partition) beyond it. So every sample
// is predicted once, and the owners' counters, which the driver sums,
// count every record once.
//
// # Namespace
//
// A namespace holds its settings (Config: partitions, and the fields kept
// for the check of namespace.go), the learner settings of its first
// driver, and its anchors, in a key-value bucket; an instance with other
// settings is refused with a message naming them.
//
// # Concurrency
//
// Worker.Run starts two goroutines per role (its pin, its owner) and the
// heartbeat, and returns when its context is cancelled, after all of them
// have ended. A ChainDriver's Send and Receive may run on two goroutines,
// one each.
package distributed
