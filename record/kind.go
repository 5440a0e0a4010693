package record

import (
	"context"
	"errors"

	"github.com/groundwork/curate/store"
)

// Getter, Putter and Lister are what a Kind needs of a store, and
// BytesGetter and BytesPutter what a BytesKind needs (*store.Store has
// them all); tests may read from something smaller.
type (
	Getter interface {
		GetJSON(ctx context.Context, item, kind string, v any) (store.Record, error)
	}
	Putter interface {
		PutJSON(ctx context.Context, item, kind string, v any, meta map[string]string) (store.Hash, error)
	}
	Lister interface {
		Items(ctx context.Context, kind string) ([]string, error)
	}
	BytesGetter interface {
		GetBytes(ctx context.Context, item, kind string) ([]byte, store.Record, error)
	}
	BytesPutter interface {
		PutBytes(ctx context.Context, item, kind string, data []byte, meta map[string]string) (store.Hash, error)
	}
)

// Kind is a kind of stored record whose values have the shape T: one
// declaration (the variables below) names each kind, fixes its shape, and
// reads and writes it, so no stage spells a kind or decodes a record by
// hand.
type Kind[T any] struct{ name string }

// KindOf declares a kind named name with values of shape T.
func KindOf[T any](name string) Kind[T] { return Kind[T]{name: name} }

// Name returns the kind's name in the store.
func (k Kind[T]) Name() string { return k.name }

// Get reads item's record of this kind. The error wraps store.ErrNotFound
// when there is none.
func (k Kind[T]) Get(ctx context.Context, st Getter, item string) (*T, store.Record, error) {
	v := new(T)
	rec, err := st.GetJSON(ctx, item, k.name, v)
	if err != nil {
		return nil, rec, err
	}
	return v, rec, nil
}

// Has reports whether item has a readable record of this kind: false for
// one that is absent (a lost one included, on a healed store), an error
// for a record that cannot be read otherwise — which callers must not
// take for absence, since absence sends a request or makes the record
// again.
func (k Kind[T]) Has(ctx context.Context, st Getter, item string) (bool, error) {
	_, ok, err := k.Lookup(ctx, st, item)
	return ok, err
}

// Lookup is Get that reports a missing record as ok false rather than an
// error.
func (k Kind[T]) Lookup(ctx context.Context, st Getter, item string) (*T, bool, error) {
	v, _, err := k.Get(ctx, st, item)
	switch {
	case errors.Is(err, store.ErrNotFound):
		return nil, false, nil
	case err != nil:
		return nil, false, err
	}
	return v, true, nil
}

// Put writes v as item's record of this kind, with meta.
func (k Kind[T]) Put(ctx context.Context, st Putter, item string, v *T, meta map[string]string) (store.Hash, error) {
	return st.PutJSON(ctx, item, k.name, v, meta)
}

// Items returns the items that have a record of this kind, sorted.
func (k Kind[T]) Items(ctx context.Context, st Lister) ([]string, error) {
	return st.Items(ctx, k.name)
}

// BytesKind is a kind of stored record whose values are bytes kept as
// they came (a page as served, a PDF, a TEI file), not JSON; like Kind,
// one declaration below names each.
type BytesKind struct{ name string }

// BytesKindOf declares a kind of bytes named name.
func BytesKindOf(name string) BytesKind { return BytesKind{name: name} }

// Name returns the kind's name in the store.
func (k BytesKind) Name() string { return k.name }

// Get reads item's record of this kind. The error wraps store.ErrNotFound
// when there is none.
func (k BytesKind) Get(ctx context.Context, st BytesGetter, item string) ([]byte, store.Record, error) {
	return st.GetBytes(ctx, item, k.name)
}

// Put writes data as item's record of this kind, with meta.
func (k BytesKind) Put(ctx context.Context, st BytesPutter, item string, data []byte, meta map[string]string) (store.Hash, error) {
	return st.PutBytes(ctx, item, k.name, data, meta)
}

// Items returns the items that have a record of this kind, sorted.
func (k BytesKind) Items(ctx context.Context, st Lister) ([]string, error) {
	return st.Items(ctx, k.name)
}

// The stored kinds of the pipeline, by the stage that writes them. Every
// kind curate stores is declared in this package (a test guards it), so
// that one place tells what a store holds.
var (
	// fetch: the page as served (bytes, with meta source, url and
	// status); the parsed Document; when arXiv and ar5iv last had no HTML
	// for it.
	RawPages  = BytesKindOf("raw")
	Documents = KindOf[Document]("document")
	NoHTMLs   = KindOf[NoHTML]("no-html")
	// RobotsFiles are the HTML hosts' robots.txt files as fetched, under
	// the file's URL (https://arxiv.org/robots.txt), kept between runs so
	// a host's file is asked for once per TTL.
	RobotsFiles = KindOf[RobotsFile]("robots-txt")

	// citegraph: Semantic Scholar's answers as received, the arXiv API
	// entry, and the linked Graph.
	S2Papers     = KindOf[S2Paper]("s2-paper")
	S2References = KindOf[S2ReferenceList]("s2-references")
	S2Batches    = KindOf[S2Filled]("s2-batch")
	ArxivMetas   = KindOf[ArxivMeta]("arxiv-meta")
	Graphs       = KindOf[Graph]("edges")

	// classify: the Selections, or the last failure.
	SelectionSets    = KindOf[Selections]("selections")
	ClassifyFailures = KindOf[ClassifyFailure]("classify-failure")

	// summarize: a target's Summary, and the mark of a paper item that
	// holds cards (its content is the item); cards themselves are kinds
	// of their own (CardKind).
	Summaries = KindOf[Summary]("summary")
	CardIndex = KindOf[map[string]string]("card-index")

	// a refresh's harvest and the licence lookup: what arXiv's OAI-PMH
	// metadata says of a paper's licence.
	PaperLicenses = KindOf[PaperLicense]("paper-license")
)
