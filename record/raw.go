package record

import "encoding/json"

// RawOf is the kind named name read as the JSON it is stored as, for
// code that carries a record without reading it: the dataset writes the
// records of the fields stages add to each instance as they are (their
// kind, with its shape, is declared here like every other).
func RawOf(name string) Kind[json.RawMessage] { return KindOf[json.RawMessage](name) }
