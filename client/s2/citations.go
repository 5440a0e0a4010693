package s2

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/url"
	"strconv"

	"github.com/groundwork/curate/record"
)

// CitationFields are the fields Citations asks for: the edge's influence
// and citing sentences, then what the citing paper needs to be dated,
// described and ranked (unprefixed, as the API wants them).
const CitationFields = "contexts,isInfluential," +
	"paperId,externalIds,title,abstract,venue,year,publicationDate,citationCount,influentialCitationCount"

// Citation is one paper citing another, as S2's citations endpoint lists
// it.
type Citation struct {
	Contexts []string `json:"contexts"`
	// IsInfluential is S2's judgement that the citing paper builds on the
	// cited one, not merely mentions it.
	IsInfluential bool                `json:"isInfluential"`
	CitingPaper   record.ScholarPaper `json:"citingPaper"`
}

// citation is a Citation as the API sends it: the citing paper in S2's
// wire shape, converted as every answer of the client is.
type citation struct {
	Contexts      []string `json:"contexts"`
	IsInfluential bool     `json:"isInfluential"`
	CitingPaper   paper    `json:"citingPaper"`
}

// CitationList is the papers citing one paper, every page joined.
type CitationList struct {
	PaperID   string     // the id asked for
	Citations []Citation // in S2's order
	Pages     int        // pages fetched
	// Capped is set when the list went on past the 9,999 items offset
	// paging can reach; EmptyPage when a page came back empty although
	// the previous one announced more (allenai/s2-folks#117).
	Capped, EmptyPage bool
}

// Complete reports whether the list is the whole of what S2 has.
func (l *CitationList) Complete() bool { return !l.Capped && !l.EmptyPage }

// citationPage is one response of the citations endpoint.
type citationPage struct {
	Offset int              `json:"offset"`
	Next   *int             `json:"next"` // absent on the last page
	Data   *json.RawMessage `json:"data"`
}

// Citations fetches the papers citing paperID (any form S2 takes, as
// References), paging with offset and next until the API reports no next
// page: one request per page of the client's page limit.
//
// An unknown paper yields an error wrapping ErrNotFound. A list past the
// 10,000-item window (Capped) or cut by an empty page (EmptyPage) is not
// an error; Complete tells them apart from a whole list.
func (c *Client) Citations(ctx context.Context, paperID string) (*CitationList, error) {
	path, err := paperPath(paperID, "/citations")
	if err != nil {
		return nil, fmt.Errorf("s2 citations: %w", err)
	}
	log := c.log.With(slog.String("paper_id", paperID))
	list := &CitationList{PaperID: paperID}
	offset := 0
	for {
		limit := min(c.limit, offsetWindow-1-offset)
		if limit <= 0 {
			list.Capped = true
			log.WarnContext(ctx, "s2 citation list capped at the offset window", slog.Int("citations", len(list.Citations)))
			return list, nil
		}
		q := url.Values{
			"fields": {CitationFields},
			"offset": {strconv.Itoa(offset)},
			"limit":  {strconv.Itoa(limit)},
		}
		body, err := c.get(ctx, "citations", paperID, path, q)
		if err != nil {
			return nil, fmt.Errorf("s2 citations %s offset %d: %w", paperID, offset, err)
		}
		list.Pages++
		var page citationPage
		if err := json.Unmarshal(body, &page); err != nil {
			return nil, fmt.Errorf("s2 citations %s offset %d: decode: %w", paperID, offset, err)
		}
		if page.Data == nil || string(*page.Data) == "null" {
			return nil, fmt.Errorf("s2 citations %s offset %d: response has no data", paperID, offset)
		}
		var wire []citation
		if err := json.Unmarshal(*page.Data, &wire); err != nil {
			return nil, fmt.Errorf("s2 citations %s offset %d: decode data: %w", paperID, offset, err)
		}
		cites := convert(wire, func(c citation) Citation {
			return Citation{Contexts: c.Contexts, IsInfluential: c.IsInfluential, CitingPaper: *c.CitingPaper.toRecord()}
		})
		if len(cites) == 0 && (offset > 0 || page.Next != nil) {
			list.EmptyPage = true
			log.WarnContext(ctx, "s2 citation page empty before the end of the list",
				slog.Int("offset", offset), slog.Int("citations", len(list.Citations)))
			return list, nil
		}
		list.Citations = append(list.Citations, cites...)
		if page.Next == nil {
			return list, nil
		}
		if *page.Next <= offset {
			return nil, fmt.Errorf("s2 citations %s offset %d: next offset %d does not advance", paperID, offset, *page.Next)
		}
		offset = *page.Next
	}
}
