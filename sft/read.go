package sft

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/parquet-go/parquet-go"
)

// Completion is one generation to check with the gate.
type Completion struct {
	Line       int    // 1-based row or line in the file
	InstanceID string // "" when the file has none
	Text       string
	// NumIdeas is the row's own K (num_ideas or extra_info.num_ideas);
	// 0 when the row has none.
	NumIdeas int
}

// ReadCompletions reads the generations in a JSONL or Parquet file (told
// apart by the Parquet magic number). A row's completion is its
// "completion" column (a string, or TRL's list of messages, of which the
// last assistant turn), else "response", else the content of the last
// assistant turn of "messages"; its K is "num_ideas", else
// "extra_info.num_ideas". A row with none of the completion columns is an
// error: a wrong file should not pass as zero failures.
func ReadCompletions(path string) ([]Completion, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("read completions: %w", err)
	}
	defer f.Close()
	magic := make([]byte, 4)
	n, _ := io.ReadFull(f, magic)
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return nil, fmt.Errorf("read completions %s: %w", path, err)
	}
	var rows []map[string]any
	if n == 4 && string(magic) == "PAR1" {
		rows, err = parquetRows(f)
	} else {
		rows, err = jsonlRows(f)
	}
	if err != nil {
		return nil, fmt.Errorf("read completions %s: %w", path, err)
	}
	out := make([]Completion, 0, len(rows))
	for i, row := range rows {
		c, err := completionOf(row)
		if err != nil {
			return nil, fmt.Errorf("read completions %s: row %d: %w", path, i+1, err)
		}
		c.Line = i + 1
		out = append(out, c)
	}
	return out, nil
}

func parquetRows(f *os.File) ([]map[string]any, error) {
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	pf, err := parquet.OpenFile(f, fi.Size())
	if err != nil {
		return nil, err
	}
	r := parquet.NewReader(pf)
	defer r.Close()
	var rows []map[string]any
	for {
		m := map[string]any{}
		err := r.Read(&m)
		if errors.Is(err, io.EOF) {
			return rows, nil
		}
		if err != nil {
			return nil, fmt.Errorf("row %d: %w", len(rows)+1, err)
		}
		rows = append(rows, m)
	}
}

func jsonlRows(r io.Reader) ([]map[string]any, error) {
	var rows []map[string]any
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 1<<20), 256<<20)
	line := 0
	for sc.Scan() {
		line++
		b := bytes.TrimSpace(sc.Bytes())
		if len(b) == 0 {
			continue
		}
		var m map[string]any
		if err := json.Unmarshal(b, &m); err != nil {
			return nil, fmt.Errorf("line %d: not a JSON object: %w", line, err)
		}
		rows = append(rows, m)
	}
	return rows, sc.Err()
}

func completionOf(row map[string]any) (Completion, error) {
	var c Completion
	found := false
	for _, k := range []string{"completion", "response"} {
		if s, ok := row[k].(string); ok {
			c.Text, found = s, true
			break
		}
		// TRL's conversational prompt-completion: a list of messages.
		if c.Text, found = lastAssistant(row[k]); found {
			break
		}
	}
	if !found {
		c.Text, found = lastAssistant(row["messages"])
	}
	if !found {
		return c, errors.New("no completion, response or assistant message (verl-rl and trl-grpo exports hold prompts, not completions)")
	}
	extra, _ := row["extra_info"].(map[string]any)
	c.NumIdeas = intOf(row["num_ideas"])
	if c.NumIdeas == 0 && extra != nil {
		c.NumIdeas = intOf(extra["num_ideas"])
	}
	c.InstanceID, _ = row["instance_id"].(string)
	if c.InstanceID == "" && extra != nil {
		c.InstanceID, _ = extra["instance_id"].(string)
	}
	return c, nil
}

// lastAssistant returns the content of the last assistant turn of a list
// of {role, content} messages.
func lastAssistant(v any) (string, bool) {
	msgs, ok := v.([]any)
	if !ok {
		return "", false
	}
	text, found := "", false
	for _, m := range msgs {
		if mm, ok := m.(map[string]any); ok && mm["role"] == "assistant" {
			text, _ = mm["content"].(string)
			found = true
		}
	}
	return text, found
}

// intOf reads a JSON or Parquet number.
func intOf(v any) int {
	switch x := v.(type) {
	case float64:
		return int(x)
	case int64:
		return int(x)
	case int32:
		return int(x)
	case int:
		return x
	case json.Number:
		i, _ := x.Int64()
		return int(i)
	case string:
		var i int
		fmt.Sscan(strings.TrimSpace(x), &i)
		return i
	}
	return 0
}
