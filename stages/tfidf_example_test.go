package stages_test

import (
	"fmt"

	"github.com/nmfstream/nmfstream/stages"
)

func ExampleTFIDF() {
	docs := []string{
		"The cat sat on the mat.",
		"The dog sat on the log.",
		"Cats and dogs.",
	}
	v := &stages.TFIDF{StopWords: stages.EnglishStopWords()}
	x, err := v.FitTransform(docs)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(v.Vocabulary())
	r, c := x.Dims()
	fmt.Printf("%d×%d\n", r, c)
	ind, val := x.Row(0)
	for p, j := range ind {
		fmt.Printf("%s %.4f\n", v.Vocabulary()[j], val[p])
	}
	// Output:
	// [cat cats dog dogs log mat sat]
	// 3×7
	// cat 0.6228
	// mat 0.6228
	// sat 0.4736
}

func ExampleTFIDF_Update() {
	// Hashing keeps the dimension fixed while a stream goes by; idf comes
	// from the running document frequencies.
	v := &stages.TFIDF{Hashing: true, NFeatures: 1 << 10}
	for _, batch := range [][]string{{"first batch of text"}, {"second batch", "more text"}} {
		if err := v.Update(batch); err != nil {
			fmt.Println(err)
			return
		}
	}
	x, _ := v.Transform([]string{"text batch"})
	r, c := x.Dims()
	fmt.Println(v.NDocs(), r, c, x.NNZ())
	// Output:
	// 3 1 1024 2
}

func ExampleTokenize() {
	fmt.Printf("%q\n", stages.Tokenize(nil, "Don't panic: it's 42 o'clock, naïve_user!"))
	// Output:
	// ["Don" "panic" "it" "42" "clock" "naïve_user"]
}

func ExampleEnglishStopWords() {
	w := stages.EnglishStopWords()
	fmt.Println(len(w), w[0], w[len(w)-1])
	// Output:
	// 318 a yourselves
}

func ExampleDefaultDocumentTFIDF() {
	tf := stages.DefaultDocumentTFIDF()
	x, err := tf.FitTransform([]string{"The cats sat on the mat.", "Cats and dogs.", "The dog sat."})
	if err != nil {
		fmt.Println(err)
		return
	}
	r, c := x.Dims()
	fmt.Println(tf.Vocabulary(), r, c) // terms of at least two documents, stop words dropped
	// Output: [cats sat] 3 2
}
