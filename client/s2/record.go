package s2

import "github.com/groundwork/curate/record"

// The client hands on S2's answers as the shapes curate stores
// (record.ScholarPaper and its parts), converted here from the API's JSON
// field by field: nil stays nil and an empty list stays empty, so a
// stored answer says exactly what S2 said.

func (p *paper) toRecord() *record.ScholarPaper {
	if p == nil {
		return nil
	}
	return &record.ScholarPaper{
		PaperID:                  p.PaperID,
		CorpusID:                 p.CorpusID,
		ExternalIDs:              p.ExternalIDs.toRecord(),
		URL:                      p.URL,
		Title:                    p.Title,
		Abstract:                 p.Abstract,
		Venue:                    p.Venue,
		PublicationVenue:         (*record.ScholarVenue)(p.PublicationVenue),
		Year:                     p.Year,
		PublicationDate:          p.PublicationDate,
		ReferenceCount:           p.ReferenceCount,
		CitationCount:            p.CitationCount,
		InfluentialCitationCount: p.InfluentialCitationCount,
		IsOpenAccess:             p.IsOpenAccess,
		OpenAccessPDF:            (*record.ScholarPDF)(p.OpenAccessPDF),
		FieldsOfStudy:            p.FieldsOfStudy,
		S2FieldsOfStudy:          convert(p.S2FieldsOfStudy, func(f fieldOfStudy) record.ScholarField { return record.ScholarField(f) }),
		PublicationTypes:         p.PublicationTypes,
		Journal:                  (*record.ScholarJournal)(p.Journal),
		Authors:                  convert(p.Authors, func(a author) record.ScholarAuthor { return record.ScholarAuthor(a) }),
		TLDR:                     (*record.ScholarTLDR)(p.TLDR),
	}
}

func (x *externalIDs) toRecord() *record.ScholarIDs {
	if x == nil {
		return nil
	}
	return &record.ScholarIDs{
		CorpusID: x.CorpusID, ArXiv: x.ArXiv, DOI: x.DOI, DBLP: x.DBLP, MAG: x.MAG,
		ACL: x.ACL, PubMed: x.PubMed, PubMedCentral: x.PubMedCentral, Other: x.Other,
	}
}

func (r *reference) toRecord() record.ScholarReference {
	return record.ScholarReference{
		Contexts: r.Contexts,
		Intents:  r.Intents,
		ContextsWithIntent: convert(r.ContextsWithIntent, func(c contextWithIntent) record.ScholarContext {
			return record.ScholarContext(c)
		}),
		IsInfluential: r.IsInfluential,
		CitedPaper:    *r.CitedPaper.toRecord(),
	}
}

// convert maps in through f, keeping nil nil.
func convert[S, D any](in []S, f func(S) D) []D {
	if in == nil {
		return nil
	}
	out := make([]D, len(in))
	for i, v := range in {
		out[i] = f(v)
	}
	return out
}
