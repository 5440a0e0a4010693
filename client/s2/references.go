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

// reference is one edge of a paper's bibliography as the API sends it.
type reference struct {
	Contexts           []string            `json:"contexts"`
	Intents            []string            `json:"intents"`
	ContextsWithIntent []contextWithIntent `json:"contextsWithIntent"`
	IsInfluential      bool                `json:"isInfluential"`
	CitedPaper         paper               `json:"citedPaper"`
}

type contextWithIntent struct {
	Context string   `json:"context"`
	Intents []string `json:"intents"`
}

// referencePage is one response of the references endpoint.
type referencePage struct {
	Offset int  `json:"offset"`
	Next   *int `json:"next"` // absent on the last page
	// Data stays raw to tell null (elided) from absent (malformed).
	Data            json.RawMessage `json:"data"`
	CitingPaperInfo *struct {
		OpenAccessPDF *openAccessPDF `json:"openAccessPdf"`
	} `json:"citingPaperInfo"`
}

// References fetches every reference of paperID (an S2 paper id such as
// "ARXIV:2401.00001", "DOI:10.1/x", "CorpusId:123" or a 40-hex id), paging
// until the API reports no next page.
//
// An unknown paper yields an error wrapping ErrNotFound. A withheld list is
// not an error ("data": null: the publisher withheld it, so the paper's
// references are unknown, not zero): the result has Elided set, and
// Disclaimer is S2's reason from citingPaperInfo.openAccessPdf.disclaimer.
// Neither are the list going on past the 9,999 items that offset paging
// can reach (offset+limit must stay below 10,000: Capped) and a page that
// comes back empty although the previous one announced it
// (allenai/s2-folks#117: EmptyPage); Complete tells them apart from a
// whole list.
func (c *Client) References(ctx context.Context, paperID string) (*record.ScholarReferences, error) {
	path, err := paperPath(paperID, "/references")
	if err != nil {
		return nil, fmt.Errorf("s2 references: %w", err)
	}
	log := c.log.With(slog.String("paper_id", paperID))
	list := &record.ScholarReferences{PaperID: paperID}
	offset := 0
	for {
		limit := min(c.limit, offsetWindow-1-offset)
		if limit <= 0 {
			list.Capped = true
			log.WarnContext(ctx, "s2 reference list capped at the offset window", slog.Int("edges", len(list.Edges)))
			return list, nil
		}
		q := url.Values{
			"fields": {ReferenceFields},
			"offset": {strconv.Itoa(offset)},
			"limit":  {strconv.Itoa(limit)},
		}
		body, err := c.get(ctx, "references", paperID, path, q)
		if err != nil {
			return nil, fmt.Errorf("s2 references %s offset %d: %w", paperID, offset, err)
		}
		list.Pages++
		var page referencePage
		if err := json.Unmarshal(body, &page); err != nil {
			return nil, fmt.Errorf("s2 references %s offset %d: decode: %w", paperID, offset, err)
		}
		switch string(page.Data) {
		case "":
			return nil, fmt.Errorf("s2 references %s offset %d: response has no data", paperID, offset)
		case "null":
			list.Elided = true
			if ci := page.CitingPaperInfo; ci != nil && ci.OpenAccessPDF != nil {
				list.Disclaimer = ci.OpenAccessPDF.Disclaimer
			}
			log.InfoContext(ctx, "s2 reference list elided by the publisher", slog.String("disclaimer", list.Disclaimer))
			return list, nil
		}
		var edges []reference
		if err := json.Unmarshal(page.Data, &edges); err != nil {
			return nil, fmt.Errorf("s2 references %s offset %d: decode data: %w", paperID, offset, err)
		}
		if len(edges) == 0 && (offset > 0 || page.Next != nil) {
			// A previous page (or this one) promised more; asking again at
			// the same offset would only repeat it.
			list.EmptyPage = true
			log.WarnContext(ctx, "s2 reference page empty before the end of the list",
				slog.Int("offset", offset), slog.Int("edges", len(list.Edges)))
			return list, nil
		}
		for i := range edges {
			list.Edges = append(list.Edges, edges[i].toRecord())
		}
		if page.Next == nil {
			return list, nil
		}
		if *page.Next <= offset {
			return nil, fmt.Errorf("s2 references %s offset %d: next offset %d does not advance", paperID, offset, *page.Next)
		}
		offset = *page.Next
	}
}
