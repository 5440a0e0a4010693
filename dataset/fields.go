package dataset

import (
	"encoding/json"
	"fmt"
	"io"
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
