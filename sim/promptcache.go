package sim

import (
	"crypto/sha256"
	"sync"
)

// promptCache simulates a provider's prompt cache: it remembers the
// prefixes of prompts it has seen and says how many tokens of a new
// prompt they cover. Tokens are counted as the simulated model counts
// them, four bytes a token.
//
// OpenAI caches automatically: a prompt of 1,024 tokens or more is cached
// in steps of 128 tokens, and a later prompt that starts with a cached
// prefix reads it. Anthropic caches at the breakpoints a request marks
// with cache_control: the prefix up to a breakpoint is written (billed as
// a cache write) the first time and read afterwards; a prefix shorter
// than the model's minimum is not cached at all.
type promptCache struct {
	mu   sync.Mutex
	seen map[[32]byte]bool
	min  int // tokens
}

const (
	bytesPerToken  = 4
	cacheStep      = 128 // tokens
	cacheMinTokens = 1024
	maxCacheKeys   = 1 << 20
)

func newPromptCache(minTokens int) *promptCache {
	if minTokens <= 0 {
		minTokens = cacheMinTokens
	}
	return &promptCache{seen: map[[32]byte]bool{}, min: minTokens}
}

func tokens(n int) int { return n / bytesPerToken }

// chain hashes prompt in steps of step bytes: sums[k] covers its first
// (k+1)·step bytes, and the cost is linear in the prompt's length.
func chain(prompt []byte, step int) [][32]byte {
	var sums [][32]byte
	var prev [32]byte
	for end := step; end <= len(prompt); end += step {
		h := sha256.New()
		h.Write(prev[:])
		h.Write(prompt[end-step : end])
		copy(prev[:], h.Sum(nil))
		sums = append(sums, prev)
	}
	return sums
}

// automatic is OpenAI's rule: it returns the cached tokens of prompt and
// remembers its prefixes.
func (c *promptCache) automatic(prompt []byte) (cached int) {
	step := cacheStep * bytesPerToken
	sums := chain(prompt, step)
	c.mu.Lock()
	defer c.mu.Unlock()
	for k := len(sums) - 1; k >= 0; k-- {
		if n := (k + 1) * cacheStep; n >= c.min && c.seen[sums[k]] {
			cached = n
			break
		}
	}
	for k, s := range sums {
		if (k+1)*cacheStep >= c.min && len(c.seen) < maxCacheKeys {
			c.seen[s] = true
		}
	}
	return cached
}

// breakpoints is Anthropic's rule for a prompt with cache breakpoints
// after the given byte offsets (ascending): it returns the tokens read
// from the cache and those written to it.
func (c *promptCache) breakpoints(prompt []byte, marks []int) (read, written int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	sum := func(end int) [32]byte { return sha256.Sum256(prompt[:end]) }
	hit := 0
	for i := len(marks) - 1; i >= 0; i-- {
		if c.seen[sum(marks[i])] {
			hit = marks[i]
			break
		}
	}
	read = tokens(hit)
	for _, m := range marks {
		if m > hit && tokens(m) >= c.min && len(c.seen) < maxCacheKeys {
			c.seen[sum(m)] = true
		}
	}
	if n := len(marks); n > 0 && marks[n-1] > hit && tokens(marks[n-1]) >= c.min {
		written = tokens(marks[n-1]) - read
	}
	return read, written
}
