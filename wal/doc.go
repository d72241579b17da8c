// Package wal is a write-ahead log: an append-only file of numbered,
// checksummed entries that a service writes before it acknowledges work,
// and reads back after a crash to redo what its last checkpoint lacks.
//
// # Format
//
// A log file is a header followed by entries:
//
//	header: "nmfstream-wal\x00\x00\x00" (16 bytes) | version (uint32)
//	entry:  length n (uint32) | seq (uint64) | CRC-32C of length and seq (uint32) |
//	        CRC-32C of the payload (uint32) | payload (n bytes)
//
// CRC-32C is the Castagnoli CRC (hash/crc32).
//
// Integers are little endian. Sequence numbers increase by one from entry
// to entry, across truncations (Writer.Truncate) and reopenings; the
// caller records the last one its checkpoint covers and skips the entries
// up to it on replay.
//
// # Crashes
//
// An entry is written with two write calls and no user-space buffer, so
// once Append returns it is in the operating system's cache and survives
// the death of the process (kill -9); Sync (fsync) makes it survive a
// crash of the machine. A crash in the middle of an Append leaves a torn
// tail: an entry that runs past the end of the file, or zeros where
// entries should be. Read stops there and reports its offsets (Info.Valid
// to the end, Info.Torn bytes); OpenWriter sets it aside. A bad entry
// header followed by data, or a complete entry whose checksum fails (even
// the last one), is not a torn tail but corruption, and is an error
// (ErrCorrupt): a crash cuts an entry short but does not change the bytes
// of one written whole. Dropped bytes are never rewritten away: Drop (and
// OpenWriter, for a torn tail) copies them to <log>.dropped-<offset>
// before truncating the log. An entry's length is checked against the
// file's size before anything is allocated.
//
// # Durability policies
//
// Writer.Commit makes an appended entry as durable as the Writer's Policy
// asks: SyncAlways fsyncs before it returns, one fsync for every caller
// waiting at the time (group commit); SyncInterval returns at once and
// relies on SyncLoop to fsync periodically (a machine crash loses at most
// that interval; a process crash loses nothing); SyncNever leaves it to
// the operating system.
package wal
