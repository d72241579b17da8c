// Package interop checks that files written by other Arrow implementations
// read in nmfstream: its tests write Arrow IPC streams and files and Parquet
// files with pyarrow (python3), then read them with package sources and the
// nmfstream command. They skip when python3 has no pyarrow. It lives under
// bench/ because it starts other programs, which the library and the
// command never do (internal/arch).
//
//	go test ./bench/interop -v
package interop
