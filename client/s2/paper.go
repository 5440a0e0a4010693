package s2

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/groundwork/curate/internal/httpx"
	"github.com/groundwork/curate/record"
)

// fieldList joins fields, defaulting to PaperFields.
func fieldList(fields []string) string {
	if len(fields) == 0 {
		return PaperFields
	}
	return strings.Join(fields, ",")
}

// Paper fetches one paper's metadata, with the given fields or PaperFields.
// An unknown id yields an error wrapping ErrNotFound that carries S2's
// message.
func (c *Client) Paper(ctx context.Context, id string, fields ...string) (*record.ScholarPaper, error) {
	path, err := paperPath(id, "")
	if err != nil {
		return nil, fmt.Errorf("s2 paper: %w", err)
	}
	body, err := c.get(ctx, "paper", id, path, url.Values{"fields": {fieldList(fields)}})
	if err != nil {
		return nil, fmt.Errorf("s2 paper %s: %w", id, err)
	}
	var p paper
	if err := json.Unmarshal(body, &p); err != nil {
		return nil, fmt.Errorf("s2 paper %s: decode: %w", id, err)
	}
	return p.toRecord(), nil
}

// Batch fetches many papers with POST /paper/batch, MaxBatch ids per call.
// The result is aligned with ids: element i is the paper of ids[i], or nil
// when S2 does not know that id.
func (c *Client) Batch(ctx context.Context, ids []string, fields ...string) ([]*record.ScholarPaper, error) {
	out := make([]*record.ScholarPaper, 0, len(ids))
	q := url.Values{"fields": {fieldList(fields)}}
	for start := 0; start < len(ids); start += MaxBatch {
		chunk := ids[start:min(start+MaxBatch, len(ids))]
		papers, err := c.batch(ctx, chunk, q)
		if err != nil {
			return nil, fmt.Errorf("s2 batch of %d ids from %q (index %d): %w", len(chunk), chunk[0], start, err)
		}
		out = append(out, papers...)
	}
	return out, nil
}

func (c *Client) batch(ctx context.Context, ids []string, q url.Values) ([]*record.ScholarPaper, error) {
	body, err := json.Marshal(struct {
		IDs []string `json:"ids"`
	}{ids})
	if err != nil {
		return nil, err
	}
	resp, err := c.svc.Do(ctx, httpx.Request{
		Method: http.MethodPost,
		Path:   apiPrefix + "paper/batch?" + encodeQuery(q),
		Body:   body,
		Header: http.Header{"Content-Type": {"application/json"}, "Accept": {"application/json"}},
	})
	if err != nil {
		return nil, err
	}
	if err := checkStatus("batch", "", resp); err != nil {
		return nil, err
	}
	var papers []*paper
	if err := json.Unmarshal(resp.Body, &papers); err != nil {
		return nil, fmt.Errorf("decode: %w", err)
	}
	if len(papers) != len(ids) {
		// Without alignment no element can be trusted to belong to its id.
		return nil, fmt.Errorf("got %d results for %d ids", len(papers), len(ids))
	}
	return convert(papers, (*paper).toRecord), nil
}
