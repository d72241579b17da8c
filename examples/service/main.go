// Command service is a small ingestion service that embeds an nmfstream
// pipeline: HTTP handlers push records into a channel, the pipeline
// batches them (by count or after an idle interval), one stage learns from
// each batch and predicts the new samples, and a sink keeps the latest
// predictions, served back at GET /predictions/{id}.
//
//	go run ./examples/service [-addr 127.0.0.1:8081] [-selftest]
//
//	curl -d '{"id":"a","x":[0,1,...]}' localhost:8081/records
//	curl -d '{"id":"a","label":"3"}'   localhost:8081/records   # a late label
//	curl localhost:8081/predictions/a
//
// With -selftest it posts the 8×8 digits to itself (10% of them labeled,
// labels late), prints the accuracy and exits.
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/signal"
	"runtime"
	"strconv"
	"sync"
	"syscall"
	"time"

	"gonum.org/v1/gonum/mat"

	"github.com/nmfstream/nmfstream/datasets"
	"github.com/nmfstream/nmfstream/model"
	"github.com/nmfstream/nmfstream/model/graph"
	"github.com/nmfstream/nmfstream/pipeline"
	nsrecord "github.com/nmfstream/nmfstream/record"
	"github.com/nmfstream/nmfstream/stages"
)

// record is one JSON record: features x, or a late label (id and label).
type record struct {
	ID    string    `json:"id"`
	X     []float64 `json:"x"`
	Label string    `json:"label"`
}

// service is the example's state: the channel the handlers push records
// into, the learner (owned by the pipeline's one learn stage) and the
// latest predictions and counters, which the sink publishes under mu for
// the handlers to read.
type service struct {
	in      chan record
	learner *stages.Learner
	off     int64 // input offset of the next record, the learn stage's

	mu    sync.Mutex
	preds map[string]stages.Prediction
	stats stages.Counters
}

func newService() *service {
	// Split spreads each step's neighbour search (and PredictWalk's walks)
	// over the cores, with the results of one core.
	split := pipeline.Split(runtime.GOMAXPROCS(0))
	return &service{
		in: make(chan record, 256),
		learner: &stages.Learner{
			Model: &model.Online{Rank: 20, Graph: graph.KNN{K: 5, Window: 5000}, Src: rand.NewPCG(1, 1), Split: split},
			Split: split,
		},
		preds: map[string]stages.Prediction{},
	}
}

// pipeline returns the service's pipeline: the channel → batches of up to
// 32 records (or whatever arrived within 20 ms of quiet) → learn (one
// goroutine owns the model) → a sink that publishes predictions.
func (s *service) pipeline() *pipeline.Pipeline {
	read := pipeline.ReadFunc[record](func(ctx context.Context) (record, error) {
		select {
		case r, ok := <-s.in:
			if !ok {
				return record{}, io.EOF
			}
			return r, nil
		case <-ctx.Done():
			return record{}, ctx.Err()
		}
	})
	return pipeline.New(pipeline.From("http", read),
		[]pipeline.Stage{
			pipeline.Batch[record]("batch", 32, 20*time.Millisecond),
			pipeline.Map("learn", 1, s.learn),
		},
		pipeline.To("predictions", pipeline.WriteFunc[*stages.Step](s.publish)))
}

// learn turns a batch of records into the learner's batch (samples of the
// first sample's width, late labels, the rest rejected) and learns it.
func (s *service) learn(ctx context.Context, rs []record) (*stages.Step, error) {
	b := &nsrecord.Batch{Form: nsrecord.FormDense}
	var rows [][]float64
	for _, r := range rs {
		switch {
		case r.X != nil && (len(rows) == 0 || len(r.X) == len(rows[0])):
			rows = append(rows, r.X)
			b.IDs = append(b.IDs, r.ID)
			b.Labels = append(b.Labels, r.Label)
			b.Labeled = append(b.Labeled, r.Label != "")
			b.Offsets = append(b.Offsets, s.off)
		case r.X == nil && r.ID != "" && r.Label != "":
			b.LateLabels = append(b.LateLabels, nsrecord.LateLabel{Offset: s.off, ID: r.ID, Label: r.Label})
		default:
			b.Rejects = append(b.Rejects, nsrecord.Reject{Offset: s.off, ID: r.ID, Reason: errors.New("bad record")})
		}
		s.off++
	}
	if len(rows) > 0 {
		b.Dense = mat.NewDense(len(rows), len(rows[0]), nil)
		for i, r := range rows {
			b.Dense.SetRow(i, r)
		}
	}
	return s.learner.Learn(b)
}

// publish keeps a step's predictions by id and the learner's counters.
func (s *service) publish(ctx context.Context, st *stages.Step) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, p := range st.Predictions {
		if p.ID != "" {
			s.preds[p.ID] = p
		}
	}
	s.stats = s.learner.Counters() // read after Learn, before the next: the stage is done with it
	return nil
}

// routes returns the service's HTTP handlers: POST /records, GET
// /predictions/{id} and GET /stats.
func (s *service) routes() *http.ServeMux {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /records", func(w http.ResponseWriter, r *http.Request) {
		dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, 16<<20))
		n := 0
		for {
			var rec record
			if err := dec.Decode(&rec); err == io.EOF {
				break
			} else if err != nil {
				http.Error(w, err.Error(), http.StatusBadRequest)
				return
			}
			select {
			case s.in <- rec:
				n++
			case <-r.Context().Done():
				return
			}
		}
		fmt.Fprintf(w, "{\"accepted\":%d}\n", n)
	})
	mux.HandleFunc("GET /predictions/{id}", func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		pr, ok := s.preds[r.PathValue("id")]
		s.mu.Unlock()
		if !ok {
			http.NotFound(w, r)
			return
		}
		fmt.Fprintf(w, "{\"id\":%q,\"pred\":%q}\n", pr.ID, pr.Label)
	})
	mux.HandleFunc("GET /stats", func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		defer s.mu.Unlock()
		json.NewEncoder(w).Encode(s.stats)
	})
	return mux
}

func main() {
	addr := flag.String("addr", "127.0.0.1:8081", "listen address")
	selftest := flag.Bool("selftest", false, "post the digits to the service, print the accuracy and exit")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	s := newService()
	p := s.pipeline()
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		log.Fatal(err)
	}
	srv := &http.Server{Handler: s.routes()}
	var wg sync.WaitGroup
	runErr := make(chan error, 1)
	wg.Go(func() { runErr <- p.Run(ctx) })
	wg.Go(func() {
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			log.Print(err)
		}
	})
	log.Printf("listening on http://%s", ln.Addr())

	if *selftest {
		selfTest("http://" + ln.Addr().String())
	} else {
		<-ctx.Done()
	}
	// Shut down: stop taking requests, then let the pipeline drain.
	sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	srv.Shutdown(sctx)
	cancel()
	close(s.in) // the source sees io.EOF: a soft stop that flushes the last batch
	wg.Wait()
	if err := <-runErr; err != nil && !errors.Is(err, context.Canceled) {
		log.Fatal(err)
	}
	c := s.learner.Counters()
	fmt.Printf("%d records, %d samples, %d labels scored: prequential accuracy %.4f\n", c.Records, c.Samples, c.Labeled, c.Accuracy())
}

// selfTest posts the shuffled digits in requests of 50 records, a tenth of
// them labeled 100 samples late, then waits until the service caught up.
func selfTest(url string) {
	x, y := datasets.Digits()
	n, _ := x.Dims()
	rnd := rand.New(rand.NewPCG(1, 1))
	order := rnd.Perm(n)
	var body bytes.Buffer
	enc := json.NewEncoder(&body)
	sent := 0
	post := func() {
		resp, err := http.Post(url+"/records", "application/x-ndjson", bytes.NewReader(bytes.Clone(body.Bytes())))
		if err != nil {
			log.Fatal(err)
		}
		resp.Body.Close()
		body.Reset()
	}
	for t, i := range order {
		enc.Encode(record{ID: strconv.Itoa(i), X: x.RawRowView(i)})
		sent++
		if t >= 100 && order[t-100]%10 == 0 {
			j := order[t-100]
			enc.Encode(record{ID: strconv.Itoa(j), Label: strconv.Itoa(y[j])})
			sent++
		}
		if (t+1)%50 == 0 {
			post()
		}
	}
	post()
	for range 200 {
		resp, err := http.Get(url + "/stats")
		if err != nil {
			log.Fatal(err)
		}
		var c stages.Counters
		json.NewDecoder(resp.Body).Decode(&c)
		resp.Body.Close()
		if c.Records == int64(sent) {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	log.Print("selftest: the service did not catch up in 10 s")
}
