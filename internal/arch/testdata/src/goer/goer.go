// Package goer starts goroutines in each way the scan knows.
package goer

import (
	"sync"
	"time"
)

func Plain() { go func() {}() }

type T struct{ wg sync.WaitGroup }

func (t *T) Group() { t.wg.Go(func() {}) }

func Later() { time.AfterFunc(time.Second, func() {}) }
