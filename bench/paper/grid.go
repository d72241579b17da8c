package main

import "github.com/nmfstream/nmfstream/model/methods"

// grid is what a run measures. quickGrid and fullGrid are the two the
// command offers; tests use smaller ones.
type grid struct {
	// rank is K and labels is L of the base configuration (docs/DESIGN.md §7).
	rank, labels int
	// iters bounds the multiplicative updates (0: each method's default).
	iters int
	// digitsN subsamples the digits (0: all 1,797).
	digitsN int

	// labelSweep lists L for accuracy vs labels; labelMethods the
	// methods; kernelLabels the L at which the (slow) kernel methods run.
	labelSweep   []int
	labelMethods []string
	kernelLabels []int

	// Sensitivity on the digits at L = labels.
	ranks            []int
	rankMethods      []string
	alphas           []float64
	alphaMethods     []string
	betas            []float64
	betaMethods      []string
	occlusion        []int // patch sides on the 8×8 digits
	occlusionMethods []string
	mnistOcclusion   []int // patch sides on 28×28 MNIST
	// imageMethods get their bases drawn as image grids.
	imageMethods []string
	// digitsNystrom and mnistNystrom are the Nyström landmarks of the
	// kernel methods (0: exact kernels).
	digitsNystrom, mnistNystrom int

	// mnist, if positive, is the MNIST subsample (one third held out);
	// mnistMethods the methods run on it.
	mnist        int
	mnistMethods []string
	brown        bool
	// docRank is K for the Brown corpus; docFolds its cross-validation folds.
	docRank, docFolds int

	// stream runs model.Online on the digits (and MNIST when loaded):
	// streamBatch records per PartialFit, streamMNIST records of MNIST.
	stream      bool
	streamBatch int
	streamMNIST int
	// speed measures throughputs; speedRepeat takes the best of that many.
	speed       bool
	speedRepeat int
	// peers runs scikit-learn when present.
	peers bool
}

// allMethods lists every method of the registry (model/methods) by name,
// and kernelMethods those whose basis lives in a kernel feature space.
var allMethods, kernelMethods = registry()

var logGrid = []float64{0.01, 0.1, 1, 10, 100, 1000}

func registry() (names []string, kernel map[string]bool) {
	kernel = map[string]bool{}
	for _, i := range methods.List() {
		if i.Alias != "" {
			continue // "auto" stands for another entry
		}
		names = append(names, i.Name)
		if i.Kernel() {
			kernel[i.Name] = true
		}
	}
	return names, kernel
}

// quickGrid is --quick: the digits only, a reduced grid, a few minutes.
func quickGrid() *grid {
	return &grid{
		rank: 40, labels: 10,
		labelSweep:       []int{1, 5, 10},
		labelMethods:     allMethods,
		kernelLabels:     []int{10},
		ranks:            []int{10, 20, 40, 60},
		rankMethods:      []string{"nmf", "gnmf", "n2s2l"},
		alphas:           []float64{1, 10, 100, 1000},
		alphaMethods:     []string{"gnmf", "n2s2l"},
		betas:            []float64{1, 10, 100, 1000},
		betaMethods:      []string{"n2s2l"},
		occlusion:        []int{0, 1, 2, 3, 4},
		occlusionMethods: []string{"nmf", "gnmf", "n2s2l", "nge", "kernel", "multik"},
		imageMethods:     []string{"nmf", "gnmf", "n2s2l"},
		stream:           true, streamBatch: 50,
		speed: true, speedRepeat: 1,
		peers: true,
	}
}

// fullGrid is the default: every sweep, MNIST and the Brown corpus when
// present.
func fullGrid() *grid {
	return &grid{
		rank: 40, labels: 10,
		labelSweep:       []int{1, 2, 5, 10, 20},
		labelMethods:     allMethods,
		kernelLabels:     []int{1, 2, 5, 10, 20},
		ranks:            []int{10, 20, 30, 40, 50, 60},
		rankMethods:      []string{"nmf", "gnmf", "dgnmf", "ssknmf", "n2s2l", "nge", "dpca"},
		alphas:           logGrid,
		alphaMethods:     []string{"gnmf", "dgnmf", "ssknmf", "n2s2l", "nge"},
		betas:            logGrid,
		betaMethods:      []string{"ssknmf", "n2s2l", "nge"},
		occlusion:        []int{0, 1, 2, 3, 4},
		occlusionMethods: []string{"nmf", "gnmf", "n2s2l", "nge", "kernel", "multik"},
		mnistOcclusion:   []int{0, 4, 8, 12, 16},
		imageMethods:     []string{"nmf", "gnmf", "n2s2l", "nge"},
		mnistNystrom:     500,
		mnist:            15000,
		mnistMethods:     []string{"nmf", "gnmf", "dgnmf", "ssknmf", "n2s2l", "nge", "dpca", "kernel"},
		brown:            true, docRank: 30, docFolds: 5,
		stream: true, streamBatch: 50, streamMNIST: 15000,
		speed: true, speedRepeat: 3,
		peers: true,
	}
}
