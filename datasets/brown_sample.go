package datasets

import (
	"bytes"
	"compress/gzip"
	_ "embed"
	"encoding/json"
	"fmt"
)

//go:embed brown_sample.json.gz
var brownSampleGz []byte

// brownGenres names the Brown corpus's genres by the letter after "c" in its
// file names (the corpus manual's categories, as cats.txt spells them).
var brownGenres = map[byte]string{
	'a': "news", 'b': "editorial", 'c': "reviews", 'd': "religion", 'e': "hobbies",
	'f': "lore", 'g': "belles_lettres", 'h': "government", 'j': "learned", 'k': "fiction",
	'l': "mystery", 'm': "science_fiction", 'n': "adventure", 'p': "romance", 'r': "humor",
}

// BrownSample returns 45 texts of the Brown corpus (W. N. Francis and
// H. Kučera, Brown University, 1964/1979), the first three of each of its 15
// genres, kept in the repository (200 KB compressed): the words of each
// text, tags removed, one string per text of about 2,300 words, with their
// files' names (ca01, …) and genres (news, …). It needs no download; the
// whole corpus (500 texts) is Brown(dir).
func BrownSample() (names, texts, genres []string, err error) {
	zr, err := gzip.NewReader(bytes.NewReader(brownSampleGz))
	if err != nil {
		return nil, nil, nil, fmt.Errorf("datasets: brown sample: %w", err)
	}
	var in struct {
		Names []string `json:"names"`
		Texts []string `json:"texts"`
	}
	if err := json.NewDecoder(zr).Decode(&in); err != nil {
		return nil, nil, nil, fmt.Errorf("datasets: brown sample: %w", err)
	}
	if len(in.Names) != len(in.Texts) {
		return nil, nil, nil, fmt.Errorf("datasets: brown sample: %d names for %d texts", len(in.Names), len(in.Texts))
	}
	for _, n := range in.Names {
		g, ok := "", false
		if len(n) > 1 {
			g, ok = brownGenres[n[1]]
		}
		if !ok {
			return nil, nil, nil, fmt.Errorf("datasets: brown sample: no genre for file %q", n)
		}
		genres = append(genres, g)
	}
	return in.Names, in.Texts, genres, nil
}
