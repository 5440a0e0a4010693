package record

// PromptDocument is one numbered source as a model input shows it: its
// number, title, year and card without the inspiration field, which cites
// the source's own sources as "Document N" and would collide with the
// input's numbering. The dataset's template renders it (its field names
// are the template's), and teachers that work without a model read it.
type PromptDocument struct {
	N                             int
	Title                         string
	Year                          int
	ProblemGap, CoreClaim, Method string
	Results, Takeaways            string
	Opportunity, Paradigm         string
}

// PromptDocuments returns what a model input shows of sources, in order.
func PromptDocuments(sources []InstanceSource) []PromptDocument {
	out := make([]PromptDocument, len(sources))
	for i, s := range sources {
		c := s.Card
		out[i] = PromptDocument{
			N: s.DocNumber, Title: s.Title, Year: s.Year,
			ProblemGap: c.ProblemGap, CoreClaim: c.CoreClaim, Method: c.Method,
			Results: c.Results, Takeaways: c.Takeaways,
			Opportunity: c.Opportunity, Paradigm: c.Paradigm,
		}
	}
	return out
}

// Message is one chat turn, as the trainers' conversational layouts (the
// exports and the SFT rows) store it.
type Message struct {
	Role    string `json:"role" parquet:"role"`
	Content string `json:"content" parquet:"content"`
}
