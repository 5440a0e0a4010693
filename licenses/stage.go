package licenses

import (
	"context"
	"errors"
	"fmt"

	"github.com/groundwork/curate/client/oaipmh"
	"github.com/groundwork/curate/internal/pipeline"
	"github.com/groundwork/curate/record"
)

// Stage is the licence lookup as a row of the table of stages whose item
// is not a target: its item is the store, whose Keys it looks up, one
// request per target not yet recorded, in order (see Lookup.Run).
type Stage struct {
	Lookup  *Lookup
	Keys    []string
	Options Options

	// Summary is what Do did (nil before).
	Summary *Summary
}

func (s *Stage) Declare() pipeline.Decl {
	return pipeline.Decl{Name: Name, About: "each target's licence from arXiv's OAI-PMH metadata, for the dataset card",
		Reads: []string{record.Graphs.Name()}, Writes: []string{record.PaperLicenses.Name()},
		Requests: []pipeline.Request{{Service: oaipmh.ServiceName}}}
}

// Do looks up the licences of the Keys the store does not record. Papers
// that failed (asked again next time) are the error, as a lookup stopped
// after failures in a row is.
func (s *Stage) Do(ctx context.Context, _ string) (string, error) {
	var err error
	s.Summary, err = s.Lookup.Run(ctx, s.Keys, s.Options)
	switch {
	case err != nil:
		return "", err
	case s.Summary.Failed > 0:
		return "", fmt.Errorf("%d licence lookups failed; the next lookup asks again: %w", s.Summary.Failed, ErrFailed)
	case s.Summary.Requests == 0:
		return pipeline.Reused, nil
	}
	return pipeline.Done, nil
}

// ErrFailed marks a lookup some papers failed in.
var ErrFailed = errors.New("lookups failed")
