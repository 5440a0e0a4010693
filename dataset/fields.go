package dataset

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"

	"github.com/parquet-go/parquet-go"

	"github.com/groundwork/curate/internal/pipeline"
	"github.com/groundwork/curate/record"
)

// The fields stages add to each instance (pipeline.Decl.Field) are
// written as columns of their own after the Instance's: a row is a
// struct made, once per write, of the Instance's fields and one per
// declared field, of the shape the field declares, so every reader sees
// the field's own schema (no JSON in a string). Without fields the
// Instance itself is written, as it always was.

// unpublished are the Instance's fields a row does not carry: the
// stages' fields, written as columns of their own, and the sources the
// knowledge cut left out.
var unpublished = map[string]bool{"Fields": true, "CutSources": true}

// rowType is the struct type of a row with fields: the Instance's fields
// (Instance.Fields aside), then one per field, named and tagged by it.
func rowType(fields []*pipeline.Field) (reflect.Type, error) {
	it := reflect.TypeFor[record.Instance]()
	var sf []reflect.StructField
	names := map[string]bool{}
	for i := range it.NumField() {
		f := it.Field(i)
		if unpublished[f.Name] {
			continue
		}
		sf = append(sf, f)
		names[f.Tag.Get("json")] = true
	}
	for i, f := range fields {
		switch {
		case f.Name == "" || f.Type == nil:
			return nil, fmt.Errorf("dataset: field %d (%q): no name or type", i, f.Name)
		case names[f.Name]:
			return nil, fmt.Errorf("dataset: field %q: the instance has a column of that name already", f.Name)
		}
		names[f.Name] = true
		sf = append(sf, reflect.StructField{Name: fmt.Sprintf("Field%d", i), Type: f.Type,
			Tag: reflect.StructTag(fmt.Sprintf(`json:"%s" parquet:"%s"`, f.Name, f.Name))})
	}
	return reflect.StructOf(sf), nil
}

// row is in as a row of type t (rowType of fields): its own fields, and
// each field's record decoded into the field's shape. An instance
// without a field's record is an error: the dataset leaves such targets
// out.
func row(t reflect.Type, in *record.Instance, fields []*pipeline.Field) (any, error) {
	v := reflect.New(t)
	iv := reflect.ValueOf(in).Elem()
	n := 0
	for i := range iv.NumField() {
		if unpublished[iv.Type().Field(i).Name] {
			continue
		}
		v.Elem().Field(n).Set(iv.Field(i))
		n++
	}
	for i, f := range fields {
		raw, ok := in.Fields[f.Name]
		if !ok {
			return nil, fmt.Errorf("dataset: instance %s has no %s field", in.InstanceID, f.Name)
		}
		if err := json.Unmarshal(raw, v.Elem().Field(n+i).Addr().Interface()); err != nil {
			return nil, fmt.Errorf("dataset: instance %s: field %s: %w", in.InstanceID, f.Name, err)
		}
	}
	return v.Interface(), nil
}

// instanceSchema is the Parquet schema of the dataset's rows.
func instanceSchema(fields []*pipeline.Field) (*parquet.Schema, error) {
	if len(fields) == 0 {
		return parquet.SchemaOf(new(record.Instance)), nil
	}
	t, err := rowType(fields)
	if err != nil {
		return nil, err
	}
	return parquet.SchemaOf(reflect.New(t).Interface()), nil
}

// encodeInstances writes the instances rows passes to write as a Parquet
// file, with the fields' columns after the Instance's.
func encodeInstances(w io.Writer, rows func(write func(*record.Instance) error) error, o WriteOptions, kv map[string]string, fields []*pipeline.Field) error {
	if len(fields) == 0 {
		return encodeParquetSeq(w, rows, o, kv, instanceOptions()...)
	}
	t, err := rowType(fields)
	if err != nil {
		return err
	}
	o = o.withDefaults()
	schema := parquet.SchemaOf(reflect.New(t).Interface())
	pw := parquet.NewWriter(w, append(writerOptions(o, kv, instanceOptions()...), schema)...)
	return flushing(pw, o, func(put func(func() error) error) error {
		return rows(func(in *record.Instance) error {
			r, err := row(t, in, fields)
			if err != nil {
				return err
			}
			return put(func() error { return pw.Write(r) })
		})
	})
}

// instanceJSON returns the encoder of the lines of instances.jsonl: the
// fields, when there are any, beside the Instance's own, as in the
// Parquet rows.
func instanceJSON(enc *json.Encoder, fields []*pipeline.Field) (func(*record.Instance) error, error) {
	if len(fields) == 0 {
		return func(in *record.Instance) error {
			c := *in
			c.CutSources = nil // not published, as in the Parquet rows
			return enc.Encode(&c)
		}, nil
	}
	t, err := rowType(fields)
	if err != nil {
		return nil, err
	}
	return func(in *record.Instance) error {
		r, err := row(t, in, fields)
		if err != nil {
			return err
		}
		return enc.Encode(r)
	}, nil
}

// ReadFields fills the Fields of p's instances (read by ReadDataset,
// which knows no stage's field) from the dataset's columns of fields, by
// instance_id, each value as the JSON of its field's type. It returns the
// fields no shard has a column of (a dataset built before the stage that
// adds it): those are left out of Fields.
func ReadFields(ctx context.Context, p *Published, fields []*pipeline.Field) (missing []string, err error) {
	if len(fields) == 0 {
		return nil, nil
	}
	at := map[string]int{}
	for i, in := range p.Instances {
		at[in.InstanceID] = i
	}
	found := map[string]bool{}
	for _, split := range []string{record.SplitTrain, record.SplitTest} {
		for _, rel := range p.Files[split] {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			have, err := readFieldColumns(filepath.Join(p.Dir, rel), fields, func(id, name string, v json.RawMessage) {
				if i, ok := at[id]; ok {
					if p.Instances[i].Fields == nil {
						p.Instances[i].Fields = map[string]json.RawMessage{}
					}
					p.Instances[i].Fields[name] = v
				}
			})
			if err != nil {
				return nil, fmt.Errorf("read dataset %s: %s: %w", p.Dir, rel, err)
			}
			for _, n := range have {
				found[n] = true
			}
		}
	}
	for _, f := range fields {
		if !found[f.Name] {
			missing = append(missing, f.Name)
		}
	}
	return missing, nil
}

// readFieldColumns reads, of the Parquet file at path, the instance_id
// and the columns of fields it has, calling put for each row's value of
// each, and returns the names of the fields it has.
func readFieldColumns(path string, fields []*pipeline.Field, put func(id, name string, v json.RawMessage)) ([]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	pf, err := parquet.OpenFile(f, fi.Size())
	if err != nil {
		return nil, err
	}
	cols := map[string]bool{}
	for _, c := range pf.Schema().Fields() {
		cols[c.Name()] = true
	}
	sf := []reflect.StructField{{Name: "InstanceID", Type: reflect.TypeFor[string](), Tag: `parquet:"instance_id"`}}
	var have []*pipeline.Field
	for _, fd := range fields {
		if cols[fd.Name] && fd.Type != nil {
			sf = append(sf, reflect.StructField{Name: fmt.Sprintf("Field%d", len(have)), Type: fd.Type,
				Tag: reflect.StructTag(fmt.Sprintf(`parquet:"%s"`, fd.Name))})
			have = append(have, fd)
		}
	}
	var names []string
	for _, fd := range have {
		names = append(names, fd.Name)
	}
	if len(have) == 0 {
		return nil, nil
	}
	t := reflect.StructOf(sf)
	r := parquet.NewReader(pf, parquet.SchemaOf(reflect.New(t).Interface()))
	defer r.Close()
	for {
		row := reflect.New(t)
		if err := r.Read(row.Interface()); errors.Is(err, io.EOF) {
			return names, nil
		} else if err != nil {
			return nil, err
		}
		id := row.Elem().Field(0).String()
		for i, fd := range have {
			v, err := json.Marshal(row.Elem().Field(i + 1).Interface())
			if err != nil {
				return nil, fmt.Errorf("field %s of %s: %w", fd.Name, id, err)
			}
			put(id, fd.Name, v)
		}
	}
}

// NormalField is a field's value in a form that reads the same whether it
// came from the store or back from Parquet, for comparing values: an
// empty list, an empty string, false, 0 and null are left out of
// objects (Parquet gives back no list where JSON had []), keys sorted.
// A value that is no JSON is returned as it is.
func NormalField(v json.RawMessage) json.RawMessage {
	var x any
	if err := json.Unmarshal(v, &x); err != nil {
		return v
	}
	b, err := json.Marshal(normalJSON(x))
	if err != nil {
		return v
	}
	return b
}

func normalJSON(x any) any {
	switch x := x.(type) {
	case map[string]any:
		for k, v := range x {
			v = normalJSON(v)
			if isEmptyJSON(v) {
				delete(x, k)
				continue
			}
			x[k] = v
		}
		return x
	case []any:
		for i, v := range x {
			x[i] = normalJSON(v)
		}
		if len(x) == 0 {
			return nil
		}
		return x
	}
	return x
}

func isEmptyJSON(v any) bool {
	switch v := v.(type) {
	case nil:
		return true
	case string:
		return v == ""
	case bool:
		return !v
	case float64:
		return v == 0
	case []any:
		return len(v) == 0
	}
	return false
}
