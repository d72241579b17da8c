package stages

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// analyzerTokens returns the tokens an analyzer finds in doc.
func analyzerTokens(doc string, keepCase bool) []string {
	a := &analyzer{keepCase: keepCase}
	a.reset(doc)
	var out []string
	for a.next() {
		out = append(out, string(a.term))
	}
	return out
}

// checkAnalyzer checks the single-pass analyzer against its definition:
// Tokenize of strings.ToLower(doc), or of doc with keepCase.
func checkAnalyzer(t *testing.T, doc string) {
	t.Helper()
	for _, keep := range []bool{false, true} {
		ref := doc
		if !keep {
			ref = strings.ToLower(doc)
		}
		want := Tokenize(nil, ref)
		if got := analyzerTokens(doc, keep); !slices.Equal(got, want) {
			t.Fatalf("keepCase=%v, doc %q: analyzer found %q, Tokenize(ToLower) %q", keep, doc, got, want)
		}
	}
}

// TestAnalyzerMatchesTokenize draws documents from an alphabet of ASCII,
// letters whose lower case changes length or class (U+0130 İ, U+212A Kelvin
// sign, U+1E9E ẞ), combining marks, digits of other scripts, CJK and invalid
// UTF-8, where a single-pass scanner could go wrong.
func TestAnalyzerMatchesTokenize(t *testing.T) {
	alphabet := []string{"a", "B", "z", "Z", "0", "9", "_", " ", ",", "'", "-", "\n",
		"é", "É", "İ", "\u212a", "ẞ", "Σ", "ς", "\u0301", "\u0663", "½", "日", "本",
		"\xff", "\xe2\x82", "\ufffd", "Ⅻ", "ǅ"}
	rnd := rand.New(rand.NewPCG(1, 1))
	for range 5000 {
		var sb strings.Builder
		for range rnd.IntN(24) {
			sb.WriteString(alphabet[rnd.IntN(len(alphabet))])
		}
		checkAnalyzer(t, sb.String())
	}
	for _, doc := range brownTexts(t)[:5] {
		checkAnalyzer(t, doc)
	}
}

func FuzzAnalyzer(f *testing.F) {
	for _, s := range []string{"", "Hello, World", "naïve CAFÉ x_y 42", "İstanbul \u212aelvin", "cafe\u0301s \xff\xfeab"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, doc string) { checkAnalyzer(t, doc) })
}

// TestAnalyzerStopAndStem checks stop-word removal before stemming and the
// stem cache: a repeated token gets the same stem.
func TestAnalyzerStopAndStem(t *testing.T) {
	a := &analyzer{stop: map[string]struct{}{"the": {}, "were": {}}, stem: true}
	a.reset("The runners were running; RUNNING runners")
	var got []string
	for a.next() {
		got = append(got, string(a.term))
	}
	if want := []string{"runner", "run", "run", "runner"}; !slices.Equal(got, want) {
		t.Errorf("terms = %q, want %q", got, want)
	}
}
