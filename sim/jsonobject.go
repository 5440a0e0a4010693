package sim

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
)

// object is a JSON object that keeps its keys in order, so that the S2
// service can answer with the fields of a record in S2's order.
type object []field

type field struct {
	key string
	val json.RawMessage
}

// parseObject decodes a JSON object, keeping its keys in order.
func parseObject(b []byte) (object, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	t, err := dec.Token()
	if err != nil {
		return nil, err
	}
	if t != json.Delim('{') {
		return nil, fmt.Errorf("want a JSON object, got %v", t)
	}
	var o object
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return nil, err
		}
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, err
		}
		o = append(o, field{key: t.(string), val: v})
	}
	if _, err := dec.Token(); err != nil {
		return nil, err
	}
	return o, nil
}

// objectOf marshals v and decodes it as an object.
func objectOf(v any) (object, error) {
	var b []byte
	switch x := v.(type) {
	case json.RawMessage:
		b = x
	case []byte:
		b = x
	case string:
		b = []byte(x)
	default:
		var err error
		if b, err = json.Marshal(v); err != nil {
			return nil, err
		}
	}
	return parseObject(b)
}

// get returns the value of key, or nil.
func (o object) get(key string) json.RawMessage {
	for _, f := range o {
		if f.key == key {
			return f.val
		}
	}
	return nil
}

// has reports whether o has key.
func (o object) has(key string) bool { return o.get(key) != nil }

// set replaces the value of key, or appends it.
func (o object) set(key string, v json.RawMessage) object {
	for i := range o {
		if o[i].key == key {
			o[i].val = v
			return o
		}
	}
	return append(o, field{key, v})
}

// stringOf returns the string value of key, "" when it is absent or no
// string.
func (o object) stringOf(key string) string {
	var s string
	if json.Unmarshal(o.get(key), &s) != nil {
		return ""
	}
	return s
}

// encode writes the object back.
func (o object) encode() []byte {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, f := range o {
		if i > 0 {
			b.WriteByte(',')
		}
		k, _ := json.Marshal(f.key)
		b.Write(k)
		b.WriteByte(':')
		b.Write(f.val)
	}
	b.WriteByte('}')
	return b.Bytes()
}

var jsonNull = json.RawMessage("null")

func mustJSON(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}

func writeBody(rw http.ResponseWriter, ctype string, body []byte) {
	rw.Header().Set("Content-Type", ctype)
	rw.Header().Set("Content-Length", strconv.Itoa(len(body)))
	rw.Write(body)
}

func writeJSON(rw http.ResponseWriter, v any) {
	body, err := json.Marshal(v)
	if err != nil {
		http.Error(rw, err.Error(), http.StatusInternalServerError)
		return
	}
	writeBody(rw, "application/json", body)
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}
