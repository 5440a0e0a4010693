package s2

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/url"
	"strconv"
)

// Reference is one edge of a paper's bibliography as S2 knows it.
type Reference struct {
	Contexts []string `json:"contexts"`
	// Intents may be empty although ContextsWithIntent carries contexts
	// (their intents are then empty too); both are S2's classifier output.
	Intents            []string            `json:"intents"`
	ContextsWithIntent []ContextWithIntent `json:"contextsWithIntent"`
	IsInfluential      bool                `json:"isInfluential"`
	CitedPaper         Paper               `json:"citedPaper"`
}

// ContextWithIntent is one citing sentence with the intents S2 gave it:
// "background", "methodology", "result".
type ContextWithIntent struct {
	Context string   `json:"context"`
	Intents []string `json:"intents"`
}

// ReferenceList is the reference list of one paper, every page joined.
type ReferenceList struct {
	PaperID string      // the id asked for
	Edges   []Reference // in S2's order; unresolved references included
	Pages   int         // pages fetched
	// Elided is set when S2 answered "data": null: the publisher withheld
	// the list, so the paper's references are unknown, not zero. Fall back
	// to the parsed bibliography.
	Elided bool
	// Disclaimer is S2's reason for an elided list, from
	// citingPaperInfo.openAccessPdf.disclaimer; it may be empty.
	Disclaimer string
	// Capped is set when the list went on past the 9,999 items that offset
	// paging can reach (offset+limit must stay below 10,000).
	Capped bool
	// EmptyPage is set when a page came back with no edges although the
	// previous page announced it (allenai/s2-folks#117): paging stopped and
	// the list is likely short.
	EmptyPage bool
}

// Complete reports whether the list is the whole of what S2 has.
func (l *ReferenceList) Complete() bool {
	return !l.Elided && !l.Capped && !l.EmptyPage
}

// referencePage is one response of the references endpoint.
type referencePage struct {
	Offset int  `json:"offset"`
	Next   *int `json:"next"` // absent on the last page
	// Data stays raw to tell null (elided) from absent (malformed).
	Data            json.RawMessage `json:"data"`
	CitingPaperInfo *struct {
		OpenAccessPDF *OpenAccessPDF `json:"openAccessPdf"`
	} `json:"citingPaperInfo"`
}

// References fetches every reference of paperID (an S2 paper id such as
// "ARXIV:2401.00001", "DOI:10.1/x", "CorpusId:123" or a 40-hex id), paging
// until the API reports no next page.
//
// An unknown paper yields an error wrapping ErrNotFound. A withheld list is
// not an error: the result has Elided set. So are the 10,000-item window
// (Capped) and an unexpected empty page (EmptyPage); Complete tells them
// apart from a whole list.
func (c *Client) References(ctx context.Context, paperID string) (*ReferenceList, error) {
	path, err := paperPath(paperID, "/references")
	if err != nil {
		return nil, fmt.Errorf("s2 references: %w", err)
	}
	log := c.log.With(slog.String("paper_id", paperID))
	list := &ReferenceList{PaperID: paperID}
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
		var edges []Reference
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
		list.Edges = append(list.Edges, edges...)
		if page.Next == nil {
			return list, nil
		}
		if *page.Next <= offset {
			return nil, fmt.Errorf("s2 references %s offset %d: next offset %d does not advance", paperID, offset, *page.Next)
		}
		offset = *page.Next
	}
}
