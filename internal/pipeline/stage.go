package pipeline

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
)

// Stage is one row of a stage table: a value that declares what it is
// (Declare) and does its work for one item (Do). Everything around the
// work (the ledger entry, attempts, the last error, held and skipped
// items, work abandoned by an interrupt, progress) is the runner's: see
// Lifecycle. A runner, its flags, the status order, the estimate and the
// dataset's inputs all read the declaration, so a new stage is a new
// value in a table and touches no other stage.
type Stage interface {
	Declare() Decl
	// Do does the stage's work for one item (a target's store key, or a
	// paper's for a stage whose items are papers) and reports Done,
	// Reused or Skipped, or an error: a HeldError (Hold, Suspect) for an
	// item that must not go on, a WaitingError (Wait) for one whose work
	// waits on something outside the run, any other error for a failure.
	// With a HeldError or WaitingError, the outcome says whether work was
	// done before (Done: the ledger counts an attempt) or not (Reused);
	// with a failure, Reused says it is an earlier failure found standing
	// (a paper known to have no page: nothing asked, no attempt).
	// It must be safe for concurrent use.
	Do(ctx context.Context, item string) (string, error)
}

// Decl is what a stage declares of itself.
type Decl struct {
	// Name is the stage's name in the ledger, in --stages, in curate
	// status and in the run summary.
	Name string
	// About is a line for help and the README.
	About string
	// Reads and Writes name the record kinds the stage reads and writes
	// for an item; Optional are kinds it reads when they are there.
	Reads, Optional, Writes []string
	// Before names the stages that run before this one when it is run on
	// its own: work it depends on that it once did itself.
	Before []string
	// Workers is the default size of its pool.
	Workers int
	// Requests are the remote requests an item the stage still has work
	// for makes, per service: what the stage adds to a run's estimate.
	Requests []Request
	// Field, when set, is what the stage adds to each dataset instance:
	// the dataset reads the record and writes it as a field of the
	// target's row.
	Field *Field
	// Off, when set, says why the stage is off in this configuration (a
	// service it needs is not configured): it is no step of a run, costs
	// nothing and writes no ledger entry; asking for it by name is a
	// usage error saying this.
	Off string
}

// Counts of a Request: what its requests are counted per.
const (
	// PerItem: Request.N requests per item the stage still has work for
	// (one without a record of the first kind it writes).
	PerItem = "item"
	// PerSource: N per source of the item not yet done (a source page
	// not yet stored, a source card not yet written), plus N for the
	// item itself when Self is set.
	PerSource = "source"
	// Batched: the requests of many items share a call (a batch
	// endpoint): the estimate counts the calls the service's feed makes.
	Batched = "batched"
)

// Request is a stage's requests to one remote service, for the estimate.
type Request struct {
	// Service is the service's name (its httpx service).
	Service string
	// Count is PerItem (the default when empty), PerSource or Batched.
	Count string
	// N is the requests per counted unit (1 when 0).
	N float64
	// Self, with Count PerSource, counts one request for the item itself
	// (a target's own card) besides its sources'.
	Self bool
	// Fallback says the service is asked only for what the one before it
	// could not serve (a mirror asked when the main site has no page):
	// the count is scaled by the share of such items seen in the store.
	Fallback bool
	// LLM, when set, is the shape of each request to a language model,
	// for its tokens and cost.
	LLM *Tokens
}

// Tokens is the size of an LLM request: its input is Fixed tokens of the
// task plus PerReferenceInput per reference of the item, the item's paper
// text up to Text tokens (0: no text) and, when Shared, the system prompt
// the paper tasks share; its answer Output tokens plus PerReference per
// reference.
type Tokens struct {
	Fixed, Text, PerReferenceInput int
	Output, PerReference           int
	Shared                         bool
	// WritesPaper: the request's paper block is written to the provider's
	// prompt cache for a later stage's request on the same target;
	// ReadsPaper: the target's own request reads it (the gold card reads
	// the paper its classify call wrote).
	WritesPaper, ReadsPaper bool
	// Sample, when set, makes a request of this shape for refs references
	// and a paper of text tokens (an llm.Request), for the LLM client to
	// plan the prompt cache by.
	Sample func(refs, text int) (any, error)
}

// Field is a field a stage adds to each dataset instance: the record of
// kind Kind the stage stored for the target, or the part of it Value
// makes, whose Go type is Type (reflect.TypeFor of the value's shape),
// written under Name.
type Field struct {
	Name  string
	About string
	Kind  string
	Type  reflect.Type
	// Value, when set, makes the field's value (JSON of Type) of the
	// record as stored: a column need not carry what the record keeps for
	// the stage alone (its input digest, its dropped claims one by one).
	// Nil takes the record whole.
	Value func(stored json.RawMessage) (json.RawMessage, error)
	// Absent, when set, is the value of the field for a target without
	// the record, which is then not left out of the dataset, nor for a
	// failure of the stage: the field of a stage that is off in this
	// configuration (Decl.Off), whose column is still in every instance.
	Absent json.RawMessage
	// Counts, when set, says what one instance's value holds worth
	// counting (claims dropped, by why): the dataset card gives the sums
	// over its instances.
	Counts func(value json.RawMessage) ([]Count, error)
}

// Count is one figure of a field's value (Field.Counts): N things of
// What ("claims dropped: the quote is not in the paper").
type Count struct {
	What string
	N    int
}

// FieldOf declares a Field of records of shape T.
func FieldOf[T any](name, kind, about string) *Field {
	return &Field{Name: name, About: about, Kind: kind, Type: reflect.TypeFor[T]()}
}

// FieldFrom declares a Field of shape T made by value of the stored
// records of shape R.
func FieldFrom[R, T any](name, kind, about string, value func(*R) T) *Field {
	f := &Field{Name: name, About: about, Kind: kind, Type: reflect.TypeFor[T]()}
	f.Value = func(stored json.RawMessage) (json.RawMessage, error) {
		var r R
		if err := json.Unmarshal(stored, &r); err != nil {
			return nil, fmt.Errorf("field %s of a %s record: %w", name, kind, err)
		}
		return json.Marshal(value(&r))
	}
	return f
}

// CountsOf sets f's Counts from a function of the value's shape T.
func CountsOf[T any](f *Field, counts func(*T) []Count) *Field {
	f.Counts = func(value json.RawMessage) ([]Count, error) {
		var v T
		if err := json.Unmarshal(value, &v); err != nil {
			return nil, fmt.Errorf("field %s: %w", f.Name, err)
		}
		return counts(&v), nil
	}
	return f
}

// ValueOf returns the field's value of a record as stored (see Value).
func (f *Field) ValueOf(stored json.RawMessage) (json.RawMessage, error) {
	if f.Value == nil {
		return stored, nil
	}
	return f.Value(stored)
}

// Func is a stage made of a declaration and a function, for tables built
// in tests and for stages with no state of their own.
type Func struct {
	Decl
	Run func(ctx context.Context, item string) (string, error)
}

func (f Func) Declare() Decl { return f.Decl }

func (f Func) Do(ctx context.Context, item string) (string, error) { return f.Run(ctx, item) }

// Preparer is a stage with work to do once per run before its first item
// (robots.txt to read, a feed of batched requests to start, a service to
// check). The runner prepares the run's stages in table order and calls
// each finish, when not nil, once the run's items are through; an error
// from Prepare stops the run before any item, one from finish is
// reported with the run.
type Preparer interface {
	Prepare(ctx context.Context, items []string) (finish func(context.Context) error, err error)
}

// Checker is a stage that can tell, before a run asks anything of any
// service, that it cannot run (the service it needs is down): the runner
// checks every stage of the run first.
type Checker interface {
	Check(ctx context.Context) error
}

// Counter is a stage that counts, for the estimate, the requests its
// items would still make of a service it declares (a Request of its
// Decl), when the declaration's generic counts cannot say (requests per
// paper, where papers are shared and may be answered by a local file).
// It reads what is stored and makes no request; notes say what it
// assumed.
type Counter interface {
	Count(ctx context.Context, items []string, r Request) (n float64, notes []string, err error)
}

// Reporter is a stage that says, item by item, what a run of it did (the
// line per paper of curate fetch). events holds the last event of each
// item that reached the stage; invalid counts the inputs that were no
// items.
type Reporter interface {
	Report(ctx context.Context, items []string, events map[string]Event, invalid int) Report
}

// Report is a Reporter's account of a run.
type Report struct {
	Lines []string // a line per item, for stdout
	Total string   // the totals, for stderr
	// Failures says the lines cover the failed items too, with why: the
	// run's own line per failure is not printed.
	Failures bool
}
