package app

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"

	"github.com/groundwork/curate/internal/publish"
)

// datasetName names a published dataset for the cards made from it: its
// directory's name and the start of its manifest's SHA-256, which tells
// two versions apart; never the local path, which means nothing where the
// card is published and may say more than it should.
func datasetName(dir string) (string, error) {
	b, err := os.ReadFile(filepath.Join(dir, publish.ManifestFile))
	if err != nil {
		return "", fmt.Errorf("read dataset manifest: %w", err)
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(b)
	return fmt.Sprintf("%s (manifest sha256 %s)", filepath.Base(abs), hex.EncodeToString(sum[:])[:12]), nil
}
