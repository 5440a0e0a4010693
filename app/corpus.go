package app

import (
	"context"
	"errors"
	"fmt"

	"github.com/groundwork/curate/client/llm"
	"github.com/groundwork/curate/dataset"
	"github.com/groundwork/curate/internal/parquetcodec"
	"github.com/groundwork/curate/internal/pipeline"
	"github.com/groundwork/curate/internal/publish"
	"github.com/groundwork/curate/licenses"
	"github.com/groundwork/curate/pairs"
	"github.com/groundwork/curate/record"
	"github.com/groundwork/curate/sft"
	"github.com/groundwork/curate/sft/tokenizer"
	"github.com/groundwork/curate/topics"
)

// corpus is the table of the stages whose item is not a target: each
// works over a store or a published dataset and writes one product (its
// item is where: the product's directory, or the store), declaring like
// the per-target stages what it reads and writes and the services it
// asks. Each is wired here to a's clients with the options of one
// command; built over a zero App it gives the declarations alone.
func corpus(a *App, o CorpusOptions) Table {
	return Table{a.licensesStage(o.Licenses), a.topicsStage(o.Topics), a.pairsStage(o.Pairs), a.sftStage(o.SFT)}
}

// CorpusOptions are the options of the stages of the corpus table, one
// command's at a time.
type CorpusOptions struct {
	Licenses LicensesOptions
	Topics   TopicsOptions
	Pairs    PairsOptions
	SFT      SFTOptions
}

// CorpusStages returns the declarations of the corpus table's stages.
func CorpusStages() []pipeline.Decl { return corpus(&App{}, CorpusOptions{}).Decls() }

// Usage is what a command prints of its LLM calls: their tallies and the
// prices to cost them.
type Usage struct {
	Meter  *llm.Meter
	Prices llm.Prices
}

func (a *App) usage() Usage { return Usage{Meter: a.Meter, Prices: a.Prices} }

// passes is Passes for a stage, keeping the batches it left in bs.
func (a *App) passes(bs **BatchState) func(context.Context, func(context.Context) (int, error)) (int, error) {
	return func(ctx context.Context, pass func(context.Context) (int, error)) (int, error) {
		n, b, err := a.Passes(ctx, pass)
		*bs = b
		return n, err
	}
}

// product ends a corpus stage's Do: a wait on batches is ErrPending
// naming what waits, a publishing lock held elsewhere ErrCannotRun.
func product(err error, waiting int, what string, bs *BatchState) error {
	var wait *pipeline.WaitingError
	switch {
	case errors.As(err, &wait):
		return PendingError(waiting, what, bs)
	case errors.Is(err, publish.ErrLocked):
		return Fail(ErrCannotRun, err)
	}
	return err
}

// TopicsOptions configure Topics.
type TopicsOptions struct {
	// Seeds are the seed papers; nil means every target of the store
	// (which must then be there).
	Seeds []string
	// Workers run the seeds the store has no graph of through fetch and
	// citegraph.
	Workers     int
	Out         string
	Options     topics.Options
	Version     string
	Compression parquetcodec.Codec
}

// TopicsOutcome is what Topics did.
type TopicsOutcome struct {
	Result  *topics.Result
	Written bool // the topics are in Out
	Batches *BatchState
	Usage   Usage
}

func (a *App) topicsStage(o TopicsOptions) *topics.Stage {
	return &topics.Stage{Builder: &topics.Builder{Store: a.Store, LLM: a.LLM, Model: a.Model, Meter: a.Meter, Log: a.Log},
		Seeds: o.Seeds, Graphs: a.BuildGraphs(o.Workers), Options: o.Options, Write: topics.WriteOptions{Version: o.Version, Compression: o.Compression}}
}

// Topics builds topic corpora from the seeds' influential citations
// (building the graphs the store lacks) and writes them to o.Out. The
// error is ErrPending while selected topics wait on their LLM tag (none
// is written), ErrIncomplete when seeds failed, ErrInterrupted.
func Topics(ctx context.Context, cfg Config, o TopicsOptions) (*TopicsOutcome, error) {
	// Without listed seeds, the seeds are the store's targets: a store
	// that is not there is a mistake, not an empty corpus.
	cfg.Existing = o.Seeds == nil
	a, err := Open(ctx, cfg)
	if err != nil {
		return nil, err
	}
	defer a.Close()
	out := &TopicsOutcome{Usage: a.usage()}
	s := a.topicsStage(o)
	s.Passes = a.passes(&out.Batches)
	_, err = s.Do(ctx, o.Out)
	out.Result = s.Result
	if err != nil {
		pending := 0
		if s.Result != nil {
			pending = len(s.Result.Pending)
		}
		return out, product(err, pending, "topic", out.Batches)
	}
	out.Written = true
	failed := 0
	for _, sd := range s.Result.Seeds {
		if sd.Status == topics.ReasonCitegraph || sd.Status == topics.ReasonInvalidID {
			failed++
		}
	}
	switch {
	case failed > 0:
		return out, Fail(ErrIncomplete, fmt.Errorf("%s failed", Plural(failed, "seed")))
	case ctx.Err() != nil:
		return out, Fail(ErrInterrupted, ctx.Err())
	}
	return out, nil
}

// PairsOptions configure Pairs.
type PairsOptions struct {
	// Dataset, when set, is a published dataset whose train split the
	// pairs are drawn from (default: every training target of the store).
	Dataset     string
	Out         string
	Options     pairs.Options
	Version     string
	Compression parquetcodec.Codec
}

// PairsOutcome is what Pairs did.
type PairsOutcome struct {
	Result  *pairs.Result
	Written bool
	Batches *BatchState
	Usage   Usage
}

func (a *App) pairsStage(o PairsOptions) *pairs.Stage {
	var rw pairs.Rewriter = pairs.Heuristic{}
	if a.LLM != nil && !llm.IsHeuristic(a.Model) {
		rw = pairs.LLM{Client: a.LLM, Model: a.Model}
	}
	return &pairs.Stage{Store: a.Store, Rewriter: rw, Options: o.Options, Write: pairs.WriteOptions{Version: o.Version, Compression: o.Compression}}
}

// Pairs builds the impact judge's validation pairs from the store's
// training targets and writes them to o.Out. The error is ErrPending
// while rewrites wait on LLM batches (nothing is written), ErrInterrupted.
func Pairs(ctx context.Context, cfg Config, o PairsOptions) (*PairsOutcome, error) {
	if o.Dataset != "" {
		pub, err := ReadDataset(ctx, o.Dataset)
		if err != nil {
			return nil, err
		}
		o.Options.Only = []string{}
		for _, in := range pub.Instances {
			if in.Split == record.SplitTrain {
				o.Options.Only = append(o.Options.Only, in.Target.ArxivID)
			}
		}
	}
	// The pairs come from the store's targets: it must be there.
	cfg.Existing = true
	a, err := Open(ctx, cfg)
	if err != nil {
		return nil, err
	}
	defer a.Close()
	out := &PairsOutcome{Usage: a.usage()}
	s := a.pairsStage(o)
	s.Passes = a.passes(&out.Batches)
	_, err = s.Do(ctx, o.Out)
	out.Result = s.Result
	if err != nil {
		pending := 0
		if s.Result != nil {
			pending = len(s.Result.Pending)
		}
		return out, product(err, pending, "rewrite", out.Batches)
	}
	out.Written = true
	if ctx.Err() != nil {
		return out, Fail(ErrInterrupted, ctx.Err())
	}
	return out, nil
}

// ReadDataset reads the published dataset in dir; one that cannot be
// read is ErrCannotRun.
func ReadDataset(ctx context.Context, dir string) (*dataset.Published, error) {
	pub, err := dataset.ReadDataset(ctx, dir)
	if err != nil {
		return nil, Fail(ErrCannotRun, err)
	}
	return pub, nil
}

// SFTOptions configure SFT.
type SFTOptions struct {
	Dataset, Out string
	// Options are the generation's; SFT adds the teacher, the meter, the
	// settle of batch mode and the token counter.
	Options sft.Options
	Write   sft.WriteOptions
	// Tokenizer is a Hugging Face tokenizer.json to count tokens with.
	Tokenizer string
	// Temperature and RetryRejects configure the LLM teacher.
	Temperature  float64
	RetryRejects bool
}

// SFTOutcome is what SFT did.
type SFTOutcome struct {
	Result  *sft.Result
	Batches *BatchState // nil outside batch mode
	Usage   Usage
}

func (a *App) sftStage(o SFTOptions) *sft.Stage {
	o.Options.Meter = a.Meter
	return &sft.Stage{Instances: func(ctx context.Context) ([]record.Instance, error) {
		pub, err := dataset.ReadDataset(ctx, o.Dataset)
		if err != nil {
			return nil, Fail(ErrCannotRun, err)
		}
		return pub.Instances, nil
	}, Options: o.Options, Write: o.Write}
}

// SFT regenerates the SFT rows of the published dataset o.Dataset with
// the heuristic teacher or the LLM of cfg, and writes them to o.Out
// (unless stopped: nothing is written, and a re-run resumes from the LLM
// cache). The error is ErrPending while instances wait on batches (the
// rest is written), ErrInterrupted when stopped.
func SFT(ctx context.Context, cfg Config, o SFTOptions) (*SFTOutcome, error) {
	if o.Options.Dataset == "" {
		name, err := datasetName(o.Dataset)
		if err != nil {
			return nil, Fail(ErrCannotRun, fmt.Errorf("sft: %w", err))
		}
		o.Options.Dataset = name
	}
	if o.Tokenizer != "" {
		tok, err := tokenizer.Load(o.Tokenizer)
		if err != nil {
			return nil, fmt.Errorf("%w: --tokenizer: %w", ErrUsage, err)
		}
		o.Options.Counter, o.Options.CounterName = tok, "tokenizer "+o.Tokenizer
	}
	a := &App{Meter: &llm.Meter{}, Prices: cfg.LLM.Prices, Log: cfg.Log}
	if cfg.LLM.Heuristic {
		o.Options.Teacher = sft.Heuristic{}
	} else {
		// The recipe: an invalid answer is retried once with the reason,
		// then rejected.
		cfg.LLM.Client.InvalidRetries = 1
		var err error
		if a, err = Open(ctx, cfg); err != nil {
			return nil, err
		}
		defer a.Close()
		teacher := llm.Completer(a.Client)
		if a.Batcher != nil {
			teacher, o.Options.Settle = a.Batcher, a.Settle
			a.CollectBatches(ctx)
		}
		if o.Options.Teacher, err = sft.NewLLMTeacher(teacher, sft.LLMConfig{
			Temperature: o.Temperature, Store: a.Store, RetryRejects: o.RetryRejects, Logger: cfg.Log, Openings: a.Client,
		}); err != nil {
			return nil, err
		}
	}
	out := &SFTOutcome{Usage: a.usage()}
	s := a.sftStage(o)
	_, err := s.Do(ctx, o.Out)
	out.Result = s.Result
	if a.Batcher != nil {
		out.Batches = a.EndBatches(ctx)
	}
	var wait *pipeline.WaitingError
	switch {
	case s.Result != nil && s.Result.Stopped:
		return out, Fail(ErrInterrupted, errors.New("stopped"))
	case errors.As(err, &wait):
		return out, PendingError(len(s.Result.Pending), "instance", out.Batches)
	case errors.Is(err, publish.ErrLocked):
		return nil, Fail(ErrCannotRun, err)
	case err != nil:
		return nil, err
	}
	return out, nil
}

// LicensesOptions configure Licenses.
type LicensesOptions struct {
	// Keys are the targets (store keys); nil means every target of the
	// store (which must then be there and hold one).
	Keys []string
	licenses.Options
}

func (a *App) licensesStage(o LicensesOptions) *licenses.Stage {
	return &licenses.Stage{Lookup: &licenses.Lookup{Store: a.Store, OAI: a.OAI, Log: a.Log}, Keys: o.Keys, Options: o.Options}
}

// RecordLicenses records the licence of each of o.Keys from arXiv's
// OAI-PMH metadata (cfg.OAIBase), as LookupLicenses does.
func RecordLicenses(ctx context.Context, cfg Config, o LicensesOptions) (*licenses.Summary, error) {
	cfg.Existing = o.Keys == nil // every target of a store that must be there
	a, err := Open(ctx, cfg)
	if err != nil {
		return nil, err
	}
	defer a.Close()
	if o.Keys == nil {
		if o.Keys, err = record.Graphs.Items(ctx, a.Store); err != nil {
			return nil, err
		}
		if len(o.Keys) == 0 {
			return nil, fmt.Errorf("%w: the store %s holds no targets: give IDs or --targets FILE", ErrUsage, a.Store.Dir())
		}
	}
	return a.LookupLicenses(ctx, o.Keys, o.Options)
}
