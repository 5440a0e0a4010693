package sim

import (
	"crypto/sha256"
	"sync"
	"time"
)

// promptCache simulates a provider's prompt cache: it remembers the
// prefixes of prompts it has seen, until they expire, and says how many
// tokens of a new prompt they cover. Tokens are counted as the simulated
// model counts them, four bytes a token. The least cacheable prefix is
// the model's (see modelRules.minCache).
//
// OpenAI caches automatically: a prompt of 1,024 tokens or more is cached
// in steps of 128 tokens, a later prompt that starts with a cached prefix
// reads it, and an entry lives some minutes after its last use. Anthropic
// caches at the breakpoints a request marks with cache_control: the
// prefix up to a breakpoint is written (billed as a cache write, at the
// price of its lifetime, five minutes or an hour) the first time and read
// afterwards, each read renewing the lifetime; a prefix shorter than the
// model's minimum is not cached at all.
//
// The requests of one batch run in parallel and do not see each other's
// writes (measured by others, providers.md): a batch's lookups see the
// cache as it was when the batch ran, and its writes land after it (see
// cacheTx). A request sent ahead of the batch is seen.
type promptCache struct {
	mu      sync.Mutex
	expires map[[32]byte]time.Time
	now     func() time.Time
}

const (
	bytesPerToken  = 4
	cacheStep      = 128 // tokens
	cacheMinTokens = 1024
	maxCacheKeys   = 1 << 20
	// openAICacheTTL is how long OpenAI keeps an automatic prefix after
	// its last use: "5 to 10 minutes of inactivity".
	openAICacheTTL = 10 * time.Minute
)

func newPromptCache() *promptCache {
	return &promptCache{expires: map[[32]byte]time.Time{}, now: time.Now}
}

func tokens(n int) int { return n / bytesPerToken }

// cacheTx is the writes of one batch, applied when it ends; nil applies
// them at once. A cold one neither reads nor writes: OpenAI keeps an
// automatic prefix minutes after its last use, and a batch runs within a
// day, so the simulation counts on nothing cached for its batches.
type cacheTx struct {
	writes map[[32]byte]time.Duration
	cold   bool
}

func newCacheTx() *cacheTx { return &cacheTx{writes: map[[32]byte]time.Duration{}} }

func newColdTx() *cacheTx { return &cacheTx{cold: true} }

// commit applies a batch's writes.
func (c *promptCache) commit(tx *cacheTx) {
	if tx.cold {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	now := c.now()
	for k, ttl := range tx.writes {
		c.put(k, now.Add(ttl))
	}
}

// put records an entry; the caller holds mu.
func (c *promptCache) put(k [32]byte, until time.Time) {
	if len(c.expires) >= maxCacheKeys {
		return
	}
	if until.After(c.expires[k]) {
		c.expires[k] = until
	}
}

// write records k for ttl now, or in tx; the caller holds mu.
func (c *promptCache) write(k [32]byte, ttl time.Duration, tx *cacheTx) {
	if tx != nil {
		if ttl > tx.writes[k] {
			tx.writes[k] = ttl
		}
		return
	}
	c.put(k, c.now().Add(ttl))
}

// live reports whether k is cached now; the caller holds mu.
func (c *promptCache) live(k [32]byte) bool {
	until, ok := c.expires[k]
	if ok && !c.now().Before(until) {
		delete(c.expires, k)
		return false
	}
	return ok
}

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
// remembers its prefixes of at least minTokens.
func (c *promptCache) automatic(prompt []byte, minTokens int, tx *cacheTx) (cached int) {
	if tx != nil && tx.cold {
		return 0
	}
	step := cacheStep * bytesPerToken
	sums := chain(prompt, step)
	c.mu.Lock()
	defer c.mu.Unlock()
	for k := len(sums) - 1; k >= 0; k-- {
		if n := (k + 1) * cacheStep; n >= minTokens && c.live(sums[k]) {
			cached = n
			c.put(sums[k], c.now().Add(openAICacheTTL)) // used: renewed
			break
		}
	}
	for k, s := range sums {
		if (k+1)*cacheStep >= minTokens {
			c.write(s, openAICacheTTL, tx)
		}
	}
	return cached
}

// mark is a cache breakpoint: the prompt up to end, with its lifetime.
type mark struct {
	end int
	ttl time.Duration
}

// breakpoints is Anthropic's rule for a prompt with cache breakpoints
// (ascending): it returns the tokens read from the cache and those
// written to it with the five-minute and the one-hour lifetime.
func (c *promptCache) breakpoints(prompt []byte, marks []mark, minTokens int, tx *cacheTx) (read, written5m, written1h int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	sum := func(end int) [32]byte { return sha256.Sum256(prompt[:end]) }
	hit := 0
	for i := len(marks) - 1; i >= 0; i-- {
		if k := sum(marks[i].end); c.live(k) {
			hit = marks[i].end
			c.put(k, c.now().Add(marks[i].ttl)) // a read renews the lifetime
			break
		}
	}
	read = tokens(hit)
	start := hit
	for _, m := range marks {
		if m.end <= hit || tokens(m.end) < minTokens {
			continue
		}
		c.write(sum(m.end), m.ttl, tx)
		if m.ttl >= time.Hour {
			written1h += tokens(m.end) - tokens(start)
		} else {
			written5m += tokens(m.end) - tokens(start)
		}
		start = m.end
	}
	return read, written5m, written1h
}
