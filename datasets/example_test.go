package datasets_test

import (
	"fmt"

	"github.com/nmfstream/nmfstream/datasets"
)

func ExampleDigits() {
	x, labels := datasets.Digits()
	r, c := x.Dims()
	fmt.Println(r, c, labels[:10])
	// Output:
	// 1797 64 [0 1 2 3 4 5 6 7 8 9]
}
