package llm

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/groundwork/curate/internal/httpx"
	"github.com/groundwork/curate/store"
)

// TestPlantedKeyNeverLeaks runs a key through every path that talks about
// a call — success, cache, format fallback, 401 and 500 bodies that quote
// the key back, invalid answers — and searches every log line, error,
// response and stored byte for it.
func TestPlantedKeyNeverLeaks(t *testing.T) {
	var b [8]byte
	rand.Read(b[:])
	key := "sk-PLANTED-" + hex.EncodeToString(b[:])

	srv := newFakeServer(t, func(n int, body map[string]any) fakeReply {
		user := messages(t, body)[1][1]
		switch {
		case strings.Contains(user, "bad key"):
			// OpenAI quotes the key it rejects; a proxy might quote it whole.
			return apiError(401, "Incorrect API key provided: "+key+". You can find your API key at https://platform.openai.com.", "")
		case strings.Contains(user, "broken"):
			return apiError(500, "upstream failed for key "+key, "")
		case strings.Contains(user, "garbled"):
			return ok("not json, and the header was Bearer " + key)
		}
		if _, ok := body["response_format"]; ok {
			return apiError(400, "response_format not supported (key "+key+")", "response_format")
		}
		// A proxy that echoes request headers into the reasoning.
		rep := ok(validAnswer)
		rep.Reasoning = "Request had Authorization: Bearer " + key
		return rep
	})

	dir := t.TempDir()
	st := openStore(t, dir)
	env := newTestClient(t, srv, Config{APIKey: key, Store: st, StructuredOutput: true})

	var outputs []string
	record := func(r *Response, err error) {
		if r != nil {
			b, _ := json.Marshal(r)
			outputs = append(outputs, string(b))
		}
		if err != nil {
			outputs = append(outputs, err.Error())
			var se *httpx.StatusError
			if errors.As(err, &se) {
				outputs = append(outputs, string(se.Body))
			}
			var ae *APIError
			if errors.As(err, &ae) {
				outputs = append(outputs, ae.Message)
			}
			var ie *InvalidError
			if errors.As(err, &ie) {
				outputs = append(outputs, ie.Reason, ie.Raw)
			}
		}
	}

	req := jsonRequest()
	record(env.client.Complete(t.Context(), req)) // fallback, then answered
	record(env.client.Complete(t.Context(), req)) // cached
	for _, user := range []string{"bad key", "broken", "garbled"} {
		r := jsonRequest()
		r.User = user
		resp, err := env.client.Complete(t.Context(), r)
		if err == nil {
			t.Fatalf("%s: no error", user)
		}
		record(resp, err)
	}
	b2, _ := json.Marshal(env.client.Meter().Tallies())
	outputs = append(outputs, string(b2))

	// The key did reach the server, as a bearer token.
	if h := srv.request(0).header.Get("Authorization"); h != "Bearer "+key {
		t.Fatalf("Authorization = %q, want the planted key", h)
	}
	for i := range srv.calls() {
		if strings.Contains(string(srv.request(i).raw), key) {
			t.Errorf("request %d body contains the key", i)
		}
	}

	needle := "PLANTED-" + hex.EncodeToString(b[:])
	logs := env.logs.String()
	if !strings.Contains(logs, "level=WARN") {
		t.Fatalf("expected warnings in the logs, got:\n%s", logs)
	}
	for line := range strings.SplitSeq(logs, "\n") {
		if strings.Contains(line, needle) {
			t.Errorf("log line contains the key: %s", line)
		}
	}
	for _, o := range outputs {
		if strings.Contains(o, needle) {
			t.Errorf("output contains the key: %s", o)
		}
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	searchStore(t, dir, needle)
}

// searchStore fails the test if needle occurs in any file of the store
// directory, raw or, for blobs, decompressed.
func searchStore(t *testing.T, dir, needle string) {
	t.Helper()
	st, err := store.Open(t.Context(), dir)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	blobs := 0
	err = filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		raw, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if strings.Contains(string(raw), needle) {
			t.Errorf("%s contains the key", path)
		}
		if name, ok := strings.CutSuffix(d.Name(), ".zst"); ok {
			data, err := st.Blob(store.Hash(name))
			if err != nil {
				return err
			}
			blobs++
			if strings.Contains(string(data), needle) {
				t.Errorf("blob %s contains the key", name)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if blobs == 0 {
		t.Error("no blobs were written: the search proves nothing")
	}
}
