package llm

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"net/textproto"
	"net/url"
	"strings"
	"time"

	"github.com/groundwork/curate/internal/httpx"
)

// openAIBatchAPI is OpenAI's Batch API: a JSONL file uploaded with
// purpose=batch, POST /v1/batches over it, polled, and its output and
// error files downloaded.
type openAIBatchAPI struct{ c *Client }

const openAIBatchEndpoint = "/v1/chat/completions"

// metaBatch is the metadata key that names curate's batch id, so a
// submission a crash cut short can be found.
const metaBatch = "curate_batch"

func (o *openAIBatchAPI) line(id string, body []byte) ([]byte, error) {
	return json.Marshal(struct {
		CustomID string          `json:"custom_id"`
		Method   string          `json:"method"`
		URL      string          `json:"url"`
		Body     json.RawMessage `json:"body"`
	}{id, http.MethodPost, openAIBatchEndpoint, body})
}

// do sends one API request and decodes a 2xx JSON answer into out.
func batchDo(ctx context.Context, c *Client, req httpx.Request, out any) ([]byte, error) {
	resp, err := c.svc.Do(ctx, req)
	if err != nil {
		return nil, err
	}
	if resp.Status < 200 || resp.Status > 299 {
		return nil, &APIError{Stage: "batch", Model: c.cfg.Model, Status: resp.Status, What: req.Method + " " + req.Path,
			Message: clip(c.scrub(errorMessage(resp.Body)), maxMessageLen)}
	}
	if out != nil {
		if err := json.Unmarshal(resp.Body, out); err != nil {
			return nil, fmt.Errorf("%s %s: decode: %w", req.Method, req.Path, err)
		}
	}
	return resp.Body, nil
}

func jsonHeader() http.Header {
	return http.Header{"Content-Type": {"application/json"}, "Accept": {"application/json"}}
}

type openAIBatch struct {
	ID           string            `json:"id"`
	Status       string            `json:"status"`
	OutputFileID string            `json:"output_file_id"`
	ErrorFileID  string            `json:"error_file_id"`
	InputFileID  string            `json:"input_file_id"`
	CreatedAt    int64             `json:"created_at"`
	Metadata     map[string]string `json:"metadata"`
	Errors       *struct {
		Data []struct {
			Code    string `json:"code"`
			Message string `json:"message"`
			Line    *int   `json:"line"`
		} `json:"data"`
	} `json:"errors"`
}

type openAIBatchInfo struct {
	InputFileID  string `json:"input_file_id,omitempty"`
	OutputFileID string `json:"output_file_id,omitempty"`
	ErrorFileID  string `json:"error_file_id,omitempty"`
}

func (o *openAIBatchAPI) submit(ctx context.Context, localID string, lines [][]byte) (string, json.RawMessage, error) {
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	mw.WriteField("purpose", "batch")
	h := textproto.MIMEHeader{}
	h.Set("Content-Disposition", fmt.Sprintf(`form-data; name="file"; filename="%s.jsonl"`, localID))
	h.Set("Content-Type", "application/jsonl")
	fw, err := mw.CreatePart(h)
	if err != nil {
		return "", nil, err
	}
	for _, l := range lines {
		fw.Write(l)
		fw.Write([]byte("\n"))
	}
	if err := mw.Close(); err != nil {
		return "", nil, err
	}
	var file struct {
		ID string `json:"id"`
	}
	if _, err := batchDo(ctx, o.c, httpx.Request{Method: http.MethodPost, Path: "files", Body: body.Bytes(),
		Header: http.Header{"Content-Type": {mw.FormDataContentType()}, "Accept": {"application/json"}}}, &file); err != nil {
		return "", nil, fmt.Errorf("upload the batch file: %w", err)
	}
	create, _ := json.Marshal(map[string]any{
		"input_file_id": file.ID, "endpoint": openAIBatchEndpoint, "completion_window": "24h",
		"metadata": map[string]string{metaBatch: localID},
	})
	var b openAIBatch
	if _, err := batchDo(ctx, o.c, httpx.Request{Method: http.MethodPost, Path: "batches", Body: create, Header: jsonHeader()}, &b); err != nil {
		return "", nil, fmt.Errorf("create the batch: %w", err)
	}
	info, _ := json.Marshal(openAIBatchInfo{InputFileID: file.ID})
	return b.ID, info, nil
}

func (o *openAIBatchAPI) find(ctx context.Context, localID string, since time.Time, _ int, known map[string]bool) (string, error) {
	after := ""
	for range 20 { // newest first; a day's batches at most
		q := url.Values{"limit": {"100"}}
		if after != "" {
			q.Set("after", after)
		}
		var page struct {
			Data    []openAIBatch `json:"data"`
			HasMore bool          `json:"has_more"`
			LastID  string        `json:"last_id"`
		}
		if _, err := batchDo(ctx, o.c, httpx.Request{Path: "batches", Query: q, Header: jsonHeader()}, &page); err != nil {
			return "", err
		}
		for _, b := range page.Data {
			if b.Metadata[metaBatch] == localID && !known[b.ID] {
				return b.ID, nil
			}
		}
		if !page.HasMore || len(page.Data) == 0 || time.Unix(page.Data[len(page.Data)-1].CreatedAt, 0).Before(since.Add(-time.Hour)) {
			return "", nil
		}
		after = page.LastID
	}
	return "", nil
}

func (o *openAIBatchAPI) status(ctx context.Context, remote string, _ json.RawMessage) (*batchStatus, error) {
	var b openAIBatch
	if _, err := batchDo(ctx, o.c, httpx.Request{Path: "batches/" + url.PathEscape(remote), Header: jsonHeader()}, &b); err != nil {
		return nil, err
	}
	info, _ := json.Marshal(openAIBatchInfo{InputFileID: b.InputFileID, OutputFileID: b.OutputFileID, ErrorFileID: b.ErrorFileID})
	st := &batchStatus{status: b.Status, info: info}
	switch b.Status {
	case "completed", "expired", "cancelled":
		st.ended = true
	case "failed":
		// Failed is OpenAI's verdict on a file that did not validate.
		st.ended, st.failed = true, true
		if b.Errors != nil && len(b.Errors.Data) > 0 {
			st.message = b.Errors.Data[0].Message
			for _, e := range b.Errors.Data {
				if e.Line != nil && *e.Line > 0 {
					if st.lines == nil {
						st.lines = map[int]string{}
					}
					st.lines[*e.Line] = strings.TrimPrefix(e.Code+": "+e.Message, ": ")
				}
			}
		}
	}
	return st, nil
}

func (o *openAIBatchAPI) results(ctx context.Context, _ string, raw json.RawMessage, each func(string, lineResult) error) error {
	var info openAIBatchInfo
	json.Unmarshal(raw, &info)
	for _, id := range []string{info.ErrorFileID, info.OutputFileID} { // output last: it wins
		if id == "" {
			continue
		}
		read := func(r io.Reader) error {
			return eachLine(r, maxResultLine, func(l []byte) error {
				var line struct {
					CustomID string `json:"custom_id"`
					Response *struct {
						StatusCode int             `json:"status_code"`
						Body       json.RawMessage `json:"body"`
					} `json:"response"`
					Error *struct {
						Code    string `json:"code"`
						Message string `json:"message"`
					} `json:"error"`
				}
				if err := json.Unmarshal(l, &line); err != nil || line.CustomID == "" {
					return nil // a line we cannot match is as good as absent: it is asked again
				}
				r := lineResult{state: BatchErrored}
				switch {
				case line.Response != nil && line.Response.StatusCode == http.StatusOK:
					r = lineResult{state: BatchSucceeded, body: line.Response.Body}
				case line.Error != nil && line.Error.Code == "batch_expired":
					r = lineResult{state: BatchExpired, err: line.Error.Message}
				case line.Error != nil && line.Error.Code == "batch_cancelled":
					r = lineResult{state: BatchCanceled, err: line.Error.Message}
				case line.Error != nil:
					r.err = line.Error.Code + ": " + line.Error.Message
				case line.Response != nil:
					r.err = fmt.Sprintf("status %d: %s", line.Response.StatusCode, clip(o.c.scrub(errorMessage(line.Response.Body)), maxMessageLen))
				}
				return each(line.CustomID, r)
			}, func(head []byte) error {
				return oversizeLine(head, each)
			})
		}
		if _, err := batchDo(ctx, o.c, httpx.Request{Path: "files/" + url.PathEscape(id) + "/content", Stream: read}, nil); err != nil {
			return fmt.Errorf("download file %s: %w", id, err)
		}
	}
	return nil
}

// oversizeLine reports a results line past maxResultLine as its
// request's failure (an answer of that size is not one curate can use):
// refused like a 413, so that it is not asked again as it is.
func oversizeLine(head []byte, each func(string, lineResult) error) error {
	id := headCustomID(head)
	if id == "" {
		return nil
	}
	return each(id, lineResult{state: BatchErrored, err: fmt.Sprintf("status %d: the answer's results line is over %d bytes", http.StatusRequestEntityTooLarge, maxResultLine)})
}
