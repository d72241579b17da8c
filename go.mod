module github.com/nmfstream/nmfstream

go 1.26

require gonum.org/v1/gonum v0.17.0

require (
	github.com/apache/arrow/go/v15 v15.0.2 // indirect
	github.com/kljensen/snowball v0.10.0 // indirect
	golang.org/x/image v0.25.0 // indirect
)
