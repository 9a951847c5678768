package analyze

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"encoding/gob"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"testing"
)

// finishInput is what the finishing worker of a split check is given:
// every part's partial and, by part, what was taken from it and comes
// back (the ids the kept fires name, the recovered devices kept, the
// incidents' details), the fires kept, the returns judged and the
// figures merged.
type finishInput struct {
	Inference                 *Inference // the driver's: the worker does not read the dataset
	Partials                  [][]byte
	Kept, Judged, Peaks       [][]byte
	Named, Recovered, Details [][]byte // by part, nil where none
	Figures                   []byte
}

// finishWorker is the finishing step: it reads in's partials in passes,
// from partials (which yields them from where they are kept), as
// FinishInPasses does, puts back what was taken, and finishes. held, if
// not nil, gets the most heap in use, after a collection, as each
// partial is put back.
func finishWorker(s *Split, in *finishInput, partials func(yield func(int, []byte) error) error, held *uint64) (*Result, error) {
	return s.FinishInPasses(FinishWindow, partials, func(p *Partial) error {
		if err := putBack(p, in); err != nil {
			return err
		}
		if held != nil {
			runtime.GC()
			var ms runtime.MemStats
			runtime.ReadMemStats(&ms)
			*held = max(*held, ms.HeapAlloc)
		}
		return nil
	}, in.Kept...)
}

// inMemory yields partials, part i at i.
func inMemory(partials [][]byte) func(yield func(int, []byte) error) error {
	return func(yield func(int, []byte) error) error {
		for i, b := range partials {
			if err := yield(i, b); err != nil {
				return err
			}
		}
		return nil
	}
}

// putBack puts into p what in holds of it.
func putBack(p *Partial, in *finishInput) error {
	k := p.Index()
	if err := p.PutIncidents(in.Details[k]); err != nil {
		return err
	}
	if k == 0 {
		if err := p.PutFigures(in.Figures); err != nil {
			return err
		}
		for _, j := range in.Judged {
			if err := p.PutStorm(j); err != nil {
				return err
			}
		}
		for _, pk := range in.Peaks {
			if err := p.PutPeaks(pk); err != nil {
				return err
			}
		}
	}
	if n := in.Named[k]; n != nil {
		if err := p.PutNames(n); err != nil {
			return err
		}
	}
	if rec := in.Recovered[k]; rec != nil {
		return p.PutRecovered(rec)
	}
	return nil
}

// finishWorkerHeap runs the finishing step on in in a process of its own,
// as a worker that runs nothing else and reads its partials as a stream
// from disk, in an order of their parts that a runner might give, and
// returns the most heap it held (finishWorker), and the records it
// checked.
func finishWorkerHeap(dir string, in *finishInput) (held uint64, records int64, err error) {
	tmp, err := os.MkdirTemp("", "stormaudit-finish-")
	if err != nil {
		return 0, 0, err
	}
	defer os.RemoveAll(tmp)
	head := *in
	head.Partials = nil
	var buf bytes.Buffer
	if err := gob.NewEncoder(&buf).Encode(&head); err != nil {
		return 0, 0, err
	}
	if err := os.WriteFile(filepath.Join(tmp, "head.gob"), buf.Bytes(), 0o600); err != nil {
		return 0, 0, err
	}
	var stream []byte
	for _, i := range rand.New(rand.NewPCG(1, 2)).Perm(len(in.Partials)) {
		stream = binary.AppendUvarint(binary.AppendUvarint(stream, uint64(i)), uint64(len(in.Partials[i])))
		stream = append(stream, in.Partials[i]...)
	}
	if err := os.WriteFile(filepath.Join(tmp, "partials"), stream, 0o600); err != nil {
		return 0, 0, err
	}
	return runWorker("TestFinishWorker", tmp, dir)
}

// runWorker runs test, a worker's step, in a process of its own on the
// input in the directory tmp, and returns the two figures it prints: the
// most heap it held and a count of what it did.
func runWorker(test, tmp, dir string) (held uint64, n int64, err error) {
	cmd := exec.Command(os.Args[0], "-test.run=^"+test+"$", "-test.v", "-test.count=1")
	cmd.Env = append(os.Environ(), "STORMAUDIT_WORKER_INPUT="+tmp, "STORMAUDIT_BENCH_DATASET="+dir)
	out, err := cmd.CombinedOutput()
	if err != nil {
		return 0, 0, fmt.Errorf("%s: %v\n%s", test, err, out)
	}
	m := regexp.MustCompile(`worker: held (\d+) bytes, (\d+)`).FindSubmatch(out)
	if m == nil {
		return 0, 0, fmt.Errorf("%s said nothing of its heap:\n%s", test, out)
	}
	held, _ = strconv.ParseUint(string(m[1]), 10, 64)
	n, _ = strconv.ParseInt(string(m[2]), 10, 64)
	return held, n, nil
}

// blobsWorkerHeap runs test, the worker of a step given every one of
// blobs at once (Infer, every part's cores; JudgeStorm, an incident's
// shares), in a process of its own, and returns the most heap it held
// (at its probe: everything decoded and merged).
func blobsWorkerHeap(test, dir string, in *Inference, blobs [][]byte) (uint64, error) {
	tmp, err := os.MkdirTemp("", "stormaudit-worker-")
	if err != nil {
		return 0, err
	}
	defer os.RemoveAll(tmp)
	var buf bytes.Buffer
	if err := gob.NewEncoder(&buf).Encode(&finishInput{Inference: in}); err != nil {
		return 0, err
	}
	if err := os.WriteFile(filepath.Join(tmp, "head.gob"), buf.Bytes(), 0o600); err != nil {
		return 0, err
	}
	var stream []byte
	for i, b := range blobs {
		stream = binary.AppendUvarint(binary.AppendUvarint(stream, uint64(i)), uint64(len(b)))
		stream = append(stream, b...)
	}
	if err := os.WriteFile(filepath.Join(tmp, "partials"), stream, 0o600); err != nil {
		return 0, err
	}
	held, _, err := runWorker(test, tmp, dir)
	return held, err
}

// TestInferWorker is the process blobsWorkerHeap starts for Infer
// (BenchmarkSplit): it runs only when STORMAUDIT_WORKER_INPUT names a
// directory of input.
func TestInferWorker(t *testing.T) {
	s, _, blobs := blobsInput(t)
	var held uint64
	inferProbe = func() { held = heapNow() }
	defer func() { inferProbe = nil }()
	byPart, err := s.Infer(blobs)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Printf("worker: held %d bytes, %d parts\n", held, len(byPart))
}

// TestJudgeWorker is the process blobsWorkerHeap starts for JudgeStorm
// (BenchmarkSplit): it runs only when STORMAUDIT_WORKER_INPUT names a
// directory of input.
func TestJudgeWorker(t *testing.T) {
	s, _, blobs := blobsInput(t)
	var held uint64
	judgeProbe = func() { held = heapNow() }
	defer func() { judgeProbe = nil }()
	if _, err := s.JudgeStorm(blobs); err != nil {
		t.Fatal(err)
	}
	fmt.Printf("worker: held %d bytes, %d shares\n", held, len(blobs))
}

// blobsInput returns a blobs worker's Split, input and blobs.
func blobsInput(t *testing.T) (*Split, *finishInput, [][]byte) {
	s, in, tmp := workerInput(t)
	var blobs [][]byte
	if err := fromDisk(filepath.Join(tmp, "partials"))(func(_ int, b []byte) error {
		blobs = append(blobs, b)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return s, in, blobs
}

// heapNow returns the heap in use after a collection.
func heapNow() uint64 {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}

// workerInput returns the Split and the input of a worker's process,
// and the directory of its input; it skips the test when it is not one.
func workerInput(t *testing.T) (*Split, *finishInput, string) {
	tmp := os.Getenv("STORMAUDIT_WORKER_INPUT")
	if tmp == "" {
		t.Skip("STORMAUDIT_WORKER_INPUT is not set: BenchmarkSplit starts this")
	}
	var in finishInput
	b, err := os.ReadFile(filepath.Join(tmp, "head.gob"))
	if err != nil {
		t.Fatal(err)
	}
	if err := gob.NewDecoder(bytes.NewReader(b)).Decode(&in); err != nil {
		t.Fatal(err)
	}
	s, err := NewSplit(os.Getenv("STORMAUDIT_BENCH_DATASET"), Options{Inference: in.Inference})
	if err != nil {
		t.Fatal(err)
	}
	return s, &in, tmp
}

// fromDisk yields the partials of the stream file at path, reading it
// again on each call.
func fromDisk(path string) func(yield func(int, []byte) error) error {
	return func(yield func(int, []byte) error) error {
		f, err := os.Open(path)
		if err != nil {
			return err
		}
		defer f.Close()
		r := bufio.NewReader(f)
		for {
			part, err := binary.ReadUvarint(r)
			if err == io.EOF {
				return nil
			}
			n, err2 := binary.ReadUvarint(r)
			if err != nil || err2 != nil {
				return fmt.Errorf("%s: %v %v", path, err, err2)
			}
			b := make([]byte, n)
			if _, err := io.ReadFull(r, b); err != nil {
				return err
			}
			if err := yield(int(part), b); err != nil {
				return err
			}
		}
	}
}

// TestFinishWorker is the process finishWorkerHeap starts (BenchmarkSplit):
// it runs only when STORMAUDIT_WORKER_INPUT names a directory of input.
func TestFinishWorker(t *testing.T) {
	s, in, tmp := workerInput(t)
	var held uint64
	res, err := finishWorker(s, in, fromDisk(filepath.Join(tmp, "partials")), &held)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Printf("worker: held %d bytes, %d records\n", held, res.Summary.Records)
}
