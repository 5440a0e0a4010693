package record

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/groundwork/curate/parse/arxiv"
	"github.com/groundwork/curate/store"
)

// Card kinds: the target's own card (gold) and its sources' cards.
const (
	CardGold   = "gold"
	CardSource = "source"
)

// Summary is what the summarize stage stores for a target (kind
// "summary"): its gold card and, per source, the text level and the card
// or the reason there is none.
type Summary struct {
	Target         string       `json:"target"`
	Model          string       `json:"model"`
	Gold           CardResult   `json:"gold"`
	Sources        []CardResult `json:"sources"`
	Written        int          `json:"written"`        // cards summarized in this run
	Reused         int          `json:"reused"`         // cards found in the store
	Failed         int          `json:"failed"`         // cards that failed (LLM, fetch, store)
	Unsummarizable int          `json:"unsummarizable"` // papers without text
	// OtherLabels counts [Other] labels among this target's cards.
	OtherLabels int `json:"other_labels"`
	// Pending counts cards whose LLM answer waits in a provider's batch;
	// a Summary with pending cards and no failed ones is not stored.
	Pending int `json:"pending,omitempty"`
	// Grounding is how far the gold card stands on the paper's own
	// abstract and introduction; nil without a gold card.
	Grounding *Grounding `json:"gold_grounding,omitempty"`
	// Suspect lists why the gold card is not grounded in the paper: the
	// target is held back unless suspects are asked for, and its sources
	// are then not summarized.
	Suspect []string `json:"suspect,omitempty"`
}

// Grounding is the summarize stage's reading of a gold card against its
// paper: the share of the card's claim words that occur in the paper's
// abstract and introduction, the least share allowed, and the card's own
// sentences that address a model.
type Grounding struct {
	Overlap      float64       `json:"overlap"`
	ClaimWords   int           `json:"claim_words"`
	Min          float64       `json:"min"`
	Instructions []Instruction `json:"instruction_like_text,omitempty"`
}

// CardResult is the outcome for one card of a target: a card (written now
// or reused), or why there is none.
type CardResult struct {
	Key   string `json:"key"`             // the source's ref key, or the target ID for the gold card
	Paper string `json:"paper,omitempty"` // the store item of the paper
	// StoreKind is the record kind the card is stored under (CardKind).
	StoreKind string `json:"store_kind,omitempty"`
	TextLevel string `json:"text_level,omitempty"` // TextFull, TextPDF or TextAbstract
	Card      *Card  `json:"card,omitempty"`
	Reused    bool   `json:"reused,omitempty"`
	// Unsummarizable is set when the paper has no text to summarize
	// (Failure says why); such a source does not fail the target.
	Unsummarizable bool `json:"unsummarizable,omitempty"`
	// Pending is set when the card's LLM answer waits in a provider's
	// batch (Failure says where): not a failure, not done.
	Pending bool   `json:"pending,omitempty"`
	Failure string `json:"failure,omitempty"`
	// ContextTrim says the paper was trimmed further than its budget to
	// fit the model's context window, and to what.
	ContextTrim string `json:"context_trim,omitempty"`
	// Version is the arXiv version of the text the card was written from
	// (Paper is that version's own item when the knowledge cut read it
	// apart, record.VersionItem); 0 when unknown.
	Version int `json:"version,omitempty"`
}

// CardFailure is the stored record of a card that could not be written
// (kind FailureKind).
type CardFailure struct {
	Paper         string    `json:"paper"`
	CardKind      string    `json:"card_kind"`
	Model         string    `json:"model"`
	PromptVersion string    `json:"prompt_version"`
	TextLevel     string    `json:"text_level,omitempty"`
	Reason        string    `json:"reason"`
	Attempts      int       `json:"attempts,omitempty"`
	Raw           string    `json:"raw,omitempty"` // the last answer as the model sent it
	At            time.Time `json:"at"`
}

const (
	cardKindPrefix    = "card:"
	failureKindPrefix = "card-failure:"
	s2ItemPrefix      = "s2:"
	titleItemPrefix   = "title:"
)

// CardKind returns the kind of a card: "card:" + card kind ("gold" or
// "source") + ":" + model + ":" + prompt version, e.g.
// "card:source:heuristic:heuristic-v2". Cards live under the paper's own
// item, so a paper has at most one card per (card kind, model, prompt
// version), whichever target asked for it.
func CardKind(cardKind, model, promptVersion string) Kind[Card] {
	return KindOf[Card](cardKindPrefix + cardKind + ":" + model + ":" + promptVersion)
}

// FailureKind returns the kind of the last failed attempt at the card
// CardKind names.
func FailureKind(cardKind, model, promptVersion string) Kind[CardFailure] {
	return KindOf[CardFailure](failureKindPrefix + cardKind + ":" + model + ":" + promptVersion)
}

// PaperItems returns the store items a paper's cards may be kept under,
// in the order the summarize stage picks them: its versionless arXiv ID,
// else "s2:"+paperId, else "title:"+normalized title. An invalid arXiv ID
// is skipped.
func PaperItems(arxivID, s2PaperID, title string) []string {
	var items []string
	if id, err := arxiv.Parse(strings.TrimSpace(arxivID)); err == nil {
		items = append(items, Key(id))
	}
	if p := strings.TrimSpace(s2PaperID); p != "" {
		items = append(items, s2ItemPrefix+p)
	}
	if t := NormalizeTitle(title); t != "" {
		items = append(items, titleItemPrefix+t)
	}
	return items
}

// StoredCard is a card with where it is stored.
type StoredCard struct {
	Paper     string // store item
	Kind      string // record kind (CardKind)
	CardKind  string // CardGold or CardSource
	TextLevel string
	Card      Card
}

// StoredCards returns every card in st (all card kinds, models and prompt
// versions), sorted by paper and kind.
func StoredCards(ctx context.Context, st *store.Store) ([]StoredCard, error) {
	items, err := st.Items(ctx, CardIndex.Name())
	if err != nil {
		return nil, fmt.Errorf("list stored cards: %w", err)
	}
	var out []StoredCard
	for _, item := range items {
		recs, err := st.Records(ctx, item)
		if err != nil {
			return nil, fmt.Errorf("list stored cards of %s: %w", item, err)
		}
		for _, r := range recs {
			rest, ok := strings.CutPrefix(r.Kind, cardKindPrefix)
			if !ok {
				continue
			}
			sc := StoredCard{Paper: item, Kind: r.Kind, TextLevel: r.Meta["text_level"]}
			sc.CardKind, _, _ = strings.Cut(rest, ":")
			if _, err := st.GetJSON(ctx, item, r.Kind, &sc.Card); err != nil {
				return nil, fmt.Errorf("read stored card of %s: %w", item, err)
			}
			out = append(out, sc)
		}
	}
	return out, nil
}
