package dataset

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/parquet-go/parquet-go"

	"github.com/groundwork/curate/record"
)

// instanceSet is a sequence of instances that the contamination rules,
// the writer and the report read in order, as often as they need: in
// memory, spilled to a file while a dataset is built, or the Parquet
// files of a dataset being checked. Only the first holds them all in
// memory.
type instanceSet interface {
	// each calls fn with every instance in order; in is valid during the
	// call only.
	each(fn func(i int, in *record.Instance) error) error
	// eachLeak is each with only what the gold-in-prompt rule reads.
	eachLeak(fn func(i int, v *leakView) error) error
}

// leakView is the part of an instance the gold-in-prompt rule reads.
type leakView struct {
	Split    string      `json:"split" parquet:"split"`
	Gold     record.Card `json:"gold" parquet:"gold"`
	Prompt   string      `json:"prompt" parquet:"prompt"`
	NumIdeas int         `json:"num_ideas" parquet:"num_ideas"`
}

// sliceSet is an instanceSet in memory.
type sliceSet []record.Instance

func (s sliceSet) each(fn func(int, *record.Instance) error) error {
	for i := range s {
		if err := fn(i, &s[i]); err != nil {
			return err
		}
	}
	return nil
}

func (s sliceSet) eachLeak(fn func(int, *leakView) error) error {
	for i := range s {
		v := leakView{Split: s[i].Split, Gold: s[i].Gold, Prompt: s[i].Prompt, NumIdeas: s[i].NumIdeas}
		if err := fn(i, &v); err != nil {
			return err
		}
	}
	return nil
}

// spill keeps instances in a temporary file, one JSON line each, and in
// memory only where each line is: a dataset of fifty thousand instances
// is built in the memory of a few.
type spill struct {
	f     *os.File
	w     *bufio.Writer
	size  int64
	offs  []int64
	lens  []int32
	wrote bool // a line was added since the last flush
}

func newSpill(dir string) (*spill, error) {
	f, err := os.CreateTemp(dir, "dataset-instances-*.jsonl")
	if err != nil {
		return nil, fmt.Errorf("dataset: spill instances: %w", err)
	}
	return &spill{f: f, w: bufio.NewWriterSize(f, 1<<20)}, nil
}

// add appends in and returns its index.
func (s *spill) add(in *record.Instance) (int, error) {
	b, err := json.Marshal(in)
	if err != nil {
		return 0, fmt.Errorf("dataset: spill instance %s: %w", in.InstanceID, err)
	}
	b = append(b, '\n')
	if _, err := s.w.Write(b); err != nil {
		return 0, fmt.Errorf("dataset: spill instances to %s: %w", s.f.Name(), err)
	}
	s.offs, s.lens = append(s.offs, s.size), append(s.lens, int32(len(b)))
	s.size += int64(len(b))
	s.wrote = true
	return len(s.offs) - 1, nil
}

func (s *spill) flush() error {
	if !s.wrote {
		return nil
	}
	s.wrote = false
	if err := s.w.Flush(); err != nil {
		return fmt.Errorf("dataset: spill instances to %s: %w", s.f.Name(), err)
	}
	return nil
}

// get reads instance i.
func (s *spill) get(i int, v any) error {
	if err := s.flush(); err != nil {
		return err
	}
	b := make([]byte, s.lens[i])
	if _, err := s.f.ReadAt(b, s.offs[i]); err != nil {
		return fmt.Errorf("dataset: read spilled instance %d: %w", i, err)
	}
	return json.Unmarshal(b, v)
}

// scan decodes every line in order, each into a fresh T.
func scan[T any](s *spill, fn func(i int, v *T) error) error {
	if err := s.flush(); err != nil {
		return err
	}
	r := bufio.NewReaderSize(io.NewSectionReader(s.f, 0, s.size), 1<<20)
	for i := range s.offs {
		line, err := r.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			// A line longer than the buffer: read it whole.
			rest := make([]byte, 0, s.lens[i])
			rest = append(rest, line...)
			for errors.Is(err, bufio.ErrBufferFull) {
				line, err = r.ReadSlice('\n')
				rest = append(rest, line...)
			}
			line = rest
		}
		if err != nil {
			return fmt.Errorf("dataset: read spilled instance %d: %w", i, err)
		}
		var v T
		if err := json.Unmarshal(line, &v); err != nil {
			return fmt.Errorf("dataset: read spilled instance %d: %w", i, err)
		}
		if err := fn(i, &v); err != nil {
			return err
		}
	}
	return nil
}

func (s *spill) each(fn func(int, *record.Instance) error) error {
	return scan(s, fn)
}

func (s *spill) eachLeak(fn func(int, *leakView) error) error {
	return scan(s, fn)
}

// close removes the file.
func (s *spill) close() error {
	if s == nil || s.f == nil {
		return nil
	}
	name := s.f.Name()
	err := s.f.Close()
	if rerr := os.Remove(name); err == nil {
		err = rerr
	}
	s.f = nil
	return err
}

// parquetSet is the instances of a dataset's Parquet files, in order,
// read a batch of rows at a time.
type parquetSet struct{ files []string }

func (p parquetSet) each(fn func(int, *record.Instance) error) error {
	return readRows(p.files, fn)
}

func (p parquetSet) eachLeak(fn func(int, *leakView) error) error {
	return readRows(p.files, fn)
}

// readRows calls fn with each row of files, in order, decoded as T (a
// struct of some of the columns reads only those).
func readRows[T any](files []string, fn func(int, *T) error) error {
	i := 0
	for _, path := range files {
		err := func() error {
			f, err := os.Open(path)
			if err != nil {
				return err
			}
			defer f.Close()
			r := parquet.NewGenericReader[T](f)
			defer r.Close()
			buf := make([]T, 32)
			for {
				n, err := r.Read(buf)
				for j := range n {
					if ferr := fn(i, &buf[j]); ferr != nil {
						return ferr
					}
					i++
				}
				if errors.Is(err, io.EOF) {
					return nil
				}
				if err != nil {
					return fmt.Errorf("row %d: %w", i, err)
				}
				clear(buf)
			}
		}()
		if err != nil {
			return fmt.Errorf("read %s: %w", path, err)
		}
	}
	return nil
}

// permSet is a spill read in another order: position i is line perm[i].
type permSet struct {
	s    *spill
	perm []int
}

func (p permSet) each(fn func(int, *record.Instance) error) error {
	for i, line := range p.perm {
		var in record.Instance
		if err := p.s.get(line, &in); err != nil {
			return err
		}
		if err := fn(i, &in); err != nil {
			return err
		}
	}
	return nil
}

func (p permSet) eachLeak(fn func(int, *leakView) error) error {
	for i, line := range p.perm {
		var v leakView
		if err := p.s.get(line, &v); err != nil {
			return err
		}
		if err := fn(i, &v); err != nil {
			return err
		}
	}
	return nil
}
