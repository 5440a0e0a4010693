package chaos

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"

	"github.com/groundwork/curate/dataset"
	"github.com/groundwork/curate/internal/publish"
	"github.com/groundwork/curate/record"
	_ "modernc.org/sqlite" // reads the ledger's rows, as the sqlite3 shell would
)

// StoredRecord is a record's row in a store's ledger.
type StoredRecord struct{ Item, Kind, Blob string }

// Records lists the records of a store (of kind, or every kind when kind
// is empty), read from its ledger; no curate may be writing it.
func Records(ctx context.Context, storeDir, kind string) ([]StoredRecord, error) {
	db, err := sql.Open("sqlite", "file:"+filepath.Join(storeDir, "ledger.db")+"?mode=ro")
	if err != nil {
		return nil, err
	}
	defer db.Close()
	rows, err := db.QueryContext(ctx, `SELECT item, kind, blob FROM records WHERE kind = ? OR ? = '' ORDER BY kind, item`, kind, kind)
	if err != nil {
		return nil, fmt.Errorf("read the records of %s: %w", storeDir, err)
	}
	defer rows.Close()
	var out []StoredRecord
	for rows.Next() {
		var r StoredRecord
		if err := rows.Scan(&r.Item, &r.Kind, &r.Blob); err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, rows.Err()
}

// BlobPath is where a store keeps a blob.
func BlobPath(storeDir, blob string) string {
	return filepath.Join(storeDir, "blobs", blob[:2], blob+".zst")
}

// DamageBlob loses (removes) a blob or garbles it.
func DamageBlob(storeDir, blob string, lose bool) error {
	p := BlobPath(storeDir, blob)
	if lose {
		return os.Remove(p)
	}
	return os.WriteFile(p, []byte("this is no zstd frame"), 0o644)
}

// Shards lists a dataset's Parquet files of split, in order.
func Shards(out, split string) []string {
	files, _ := filepath.Glob(filepath.Join(out, dataset.DataDir, split+"-*.parquet"))
	sort.Strings(files)
	return files
}

// CopyGold copies a test instance's gold card over a training instance's
// in out's shards and rewrites the manifest to match, as someone covering
// the copy up would: the files verify, and only the contamination rules
// can tell. It returns the two instance IDs.
func CopyGold(out string, rng *rand.Rand) (train, test string, err error) {
	tests, trains := Shards(out, record.SplitTest), Shards(out, record.SplitTrain)
	if len(tests) == 0 || len(trains) == 0 {
		return "", "", errors.New("no test or no train shard")
	}
	from, err := dataset.ReadParquet(tests[rng.IntN(len(tests))])
	if err != nil || len(from) == 0 {
		return "", "", fmt.Errorf("read a test shard: %d rows, %v", len(from), err)
	}
	path := trains[rng.IntN(len(trains))]
	rows, err := dataset.ReadParquet(path)
	if err != nil || len(rows) == 0 {
		return "", "", fmt.Errorf("read a train shard: %d rows, %v", len(rows), err)
	}
	src := from[rng.IntN(len(from))]
	i := rng.IntN(len(rows))
	rows[i].Gold = src.Gold
	f, err := os.Create(path)
	if err != nil {
		return "", "", err
	}
	if err := dataset.WriteParquet(f, rows, ""); err != nil {
		f.Close()
		return "", "", err
	}
	if err := f.Close(); err != nil {
		return "", "", err
	}
	return rows[i].InstanceID, src.InstanceID, Remanifest(out)
}

// Remanifest rewrites dir's manifest to match its files (sizes and
// SHA-256s), keeping its other fields.
func Remanifest(dir string) error {
	p := filepath.Join(dir, publish.ManifestFile)
	b, err := os.ReadFile(p)
	if err != nil {
		return err
	}
	var m publish.Manifest
	if err := json.Unmarshal(b, &m); err != nil {
		return err
	}
	for i, f := range m.Files {
		body, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(f.Path)))
		if err != nil {
			return err
		}
		sum := sha256.Sum256(body)
		m.Files[i].Size, m.Files[i].SHA256 = int64(len(body)), hex.EncodeToString(sum[:])
	}
	b, err = json.MarshalIndent(m, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(p, append(b, '\n'), 0o644)
}

// A damage is something done to a published dataset's files.
type damage struct {
	name string
	do   func(out string, rng *rand.Rand) error
	// mayRefuse says curate may refuse to publish over it (it cannot tell
	// its files from the user's there): the harness puts the backup back.
	mayRefuse bool
}

func anyShard(out string, rng *rand.Rand) (string, error) {
	all := append(Shards(out, record.SplitTrain), Shards(out, record.SplitTest)...)
	if len(all) == 0 {
		return "", errors.New("no shard")
	}
	return all[rng.IntN(len(all))], nil
}

func onShard(fn func(path string, rng *rand.Rand) error) func(string, *rand.Rand) error {
	return func(out string, rng *rand.Rand) error {
		p, err := anyShard(out, rng)
		if err != nil {
			return err
		}
		return fn(p, rng)
	}
}

func truncate(path string, rng *rand.Rand) error {
	fi, err := os.Stat(path)
	if err != nil {
		return err
	}
	return os.Truncate(path, rng.Int64N(max(fi.Size(), 1)))
}

func garble(path string, rng *rand.Rand) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	if len(b) == 0 {
		b = []byte{0}
	}
	for range 1 + len(b)/512 {
		b[rng.IntN(len(b))] ^= byte(1 + rng.IntN(255))
	}
	return os.WriteFile(path, b, 0o644)
}

func file(name string, fn func(string, *rand.Rand) error) func(string, *rand.Rand) error {
	return func(out string, rng *rand.Rand) error { return fn(filepath.Join(out, name), rng) }
}

// damages are what a published dataset may suffer.
var damages = []damage{
	{name: "a shard deleted", do: onShard(func(p string, _ *rand.Rand) error { return os.Remove(p) })},
	{name: "a shard truncated", do: onShard(truncate)},
	{name: "a shard garbled", do: onShard(garble)},
	{name: "the card garbled", do: file(dataset.ReadmeFile, garble)},
	{name: "the contamination report truncated", do: file(dataset.ContaminationFile, truncate)},
	{name: "the dropped list deleted", do: file(dataset.DroppedFile, func(p string, _ *rand.Rand) error { return os.Remove(p) })},
	{name: "the manifest garbled", do: file(publish.ManifestFile, garble), mayRefuse: true},
	{name: "the manifest deleted", do: file(publish.ManifestFile, func(p string, _ *rand.Rand) error { return os.Remove(p) }), mayRefuse: true},
	{name: "a stray shard among the shards", do: func(out string, rng *rand.Rand) error {
		p, err := anyShard(out, rng)
		if err != nil {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(out, dataset.DataDir, "train-00007-of-00009.parquet"), b, 0o644)
	}, mayRefuse: true},
}
