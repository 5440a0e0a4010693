package llm

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"time"

	"github.com/groundwork/curate/internal/httpx"
)

// anthropicBatchAPI is Anthropic's Message Batches: POST
// /v1/messages/batches with the requests inline, polled until its
// processing_status is ended, then its results_url read as JSONL.
type anthropicBatchAPI struct{ c *Client }

func (a *anthropicBatchAPI) line(id string, body []byte) ([]byte, error) {
	return json.Marshal(struct {
		CustomID string          `json:"custom_id"`
		Params   json.RawMessage `json:"params"`
	}{id, body})
}

type anthropicBatch struct {
	ID               string         `json:"id"`
	ProcessingStatus string         `json:"processing_status"`
	RequestCounts    map[string]int `json:"request_counts"`
	CreatedAt        time.Time      `json:"created_at"`
	ResultsURL       string         `json:"results_url"`
}

func (a *anthropicBatchAPI) header() http.Header { return a.c.proto.header(a.c) }

func (a *anthropicBatchAPI) submit(ctx context.Context, _ string, lines [][]byte) (string, json.RawMessage, error) {
	body := append([]byte(`{"requests":[`), bytes.Join(lines, []byte(","))...)
	body = append(body, "]}"...)
	var b anthropicBatch
	if _, err := batchDo(ctx, a.c, httpx.Request{Method: http.MethodPost, Path: "messages/batches", Body: body, Header: a.header()}, &b); err != nil {
		return "", nil, fmt.Errorf("create the message batch: %w", err)
	}
	return b.ID, nil, nil
}

// find adopts a batch the ledger does not know that was created since
// the submission was recorded and holds as many requests: Message
// Batches carry no metadata. Its results are matched by custom_id, so a
// wrong adoption would show as requests without results, asked again.
func (a *anthropicBatchAPI) find(ctx context.Context, _ string, since time.Time, requests int, known map[string]bool) (string, error) {
	var page struct {
		Data []anthropicBatch `json:"data"`
	}
	if _, err := batchDo(ctx, a.c, httpx.Request{Path: "messages/batches", Query: url.Values{"limit": {"100"}}, Header: a.header()}, &page); err != nil {
		return "", err
	}
	for _, b := range page.Data {
		total := 0
		for _, n := range b.RequestCounts {
			total += n
		}
		if !known[b.ID] && total == requests && !b.CreatedAt.Before(since.Add(-time.Minute)) {
			return b.ID, nil
		}
	}
	return "", nil
}

func (a *anthropicBatchAPI) status(ctx context.Context, remote string, _ json.RawMessage) (*batchStatus, error) {
	var b anthropicBatch
	if _, err := batchDo(ctx, a.c, httpx.Request{Path: "messages/batches/" + url.PathEscape(remote), Header: a.header()}, &b); err != nil {
		return nil, err
	}
	info, _ := json.Marshal(map[string]string{"results_url": b.ResultsURL})
	return &batchStatus{status: b.ProcessingStatus, ended: b.ProcessingStatus == "ended", info: info}, nil
}

func (a *anthropicBatchAPI) results(ctx context.Context, remote string, raw json.RawMessage, each func(string, lineResult) error) error {
	var info struct {
		ResultsURL string `json:"results_url"`
	}
	json.Unmarshal(raw, &info)
	path := info.ResultsURL
	if path == "" {
		path = "messages/batches/" + url.PathEscape(remote) + "/results"
	}
	read := func(r io.Reader) error {
		return eachLine(r, maxResultLine, func(l []byte) error {
			var line struct {
				CustomID string `json:"custom_id"`
				Result   struct {
					Type    string          `json:"type"`
					Message json.RawMessage `json:"message"`
					Error   json.RawMessage `json:"error"`
				} `json:"result"`
			}
			if err := json.Unmarshal(l, &line); err != nil || line.CustomID == "" {
				return nil
			}
			switch line.Result.Type {
			case "succeeded":
				return each(line.CustomID, lineResult{state: BatchSucceeded, body: line.Result.Message})
			case "expired":
				return each(line.CustomID, lineResult{state: BatchExpired})
			case "canceled":
				return each(line.CustomID, lineResult{state: BatchCanceled})
			}
			msg := clip(a.c.scrub(errorMessage(line.Result.Error)), maxMessageLen)
			if anthropicErrorType(line.Result.Error) == "invalid_request_error" {
				// Refused as a request, like a 400 from the Messages API.
				msg = fmt.Sprintf("status %d: %s", http.StatusBadRequest, msg)
			}
			return each(line.CustomID, lineResult{state: BatchErrored, err: msg})
		}, func(head []byte) error {
			return oversizeLine(head, each)
		})
	}
	_, err := batchDo(ctx, a.c, httpx.Request{Path: path, Header: a.header(), Stream: read}, nil)
	return err
}

// anthropicErrorType reads the type of an error result: {"type":"error",
// "error":{"type":"invalid_request_error",...}} or the inner object alone.
func anthropicErrorType(raw json.RawMessage) string {
	var e struct {
		Type  string `json:"type"`
		Error *struct {
			Type string `json:"type"`
		} `json:"error"`
	}
	if json.Unmarshal(raw, &e) != nil {
		return ""
	}
	if e.Error != nil {
		return e.Error.Type
	}
	return e.Type
}
