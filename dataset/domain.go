package dataset

import "strings"

// DomainUnknown is the domain of a target without a primary category.
const DomainUnknown = "Unknown"

// domains maps arXiv categories to the coarse domain label an instance
// carries. A category is looked up whole first ("cs.CL"), then by its
// archive, the part before the dot ("cs"); hyphenated physics archives
// ("hep-th", "cond-mat", ...) are listed by name. The table follows the
// arXiv category taxonomy; "Computer Science" catches the cs categories not
// named on their own.
var domains = map[string]string{
	// Computer science: the categories the recipe's users split by.
	"cs.CL": "Language",
	"cs.LG": "Machine Learning",
	"cs.AI": "Artificial Intelligence",
	"cs.CV": "Vision",
	"cs.RO": "Robotics",
	"cs.CR": "Security",
	"cs.IR": "Information Retrieval",
	"cs.HC": "Human-Computer Interaction",
	"cs.SE": "Software Engineering",
	"cs.DC": "Systems",
	"cs.OS": "Systems",
	"cs.NI": "Systems",
	"cs.AR": "Systems",
	"cs.PF": "Systems",
	"cs.DB": "Databases",
	"cs.DS": "Theory",
	"cs.CC": "Theory",
	"cs.LO": "Theory",
	"cs.FL": "Theory",
	"cs.GT": "Theory",
	"cs.SD": "Audio & Speech",
	"cs":    "Computer Science",
	// Electrical engineering and systems science.
	"eess.AS": "Audio & Speech",
	"eess.IV": "Vision",
	"eess":    "Electrical Engineering",
	// Statistics: machine learning is its own domain wherever it is filed.
	"stat.ML": "Machine Learning",
	"stat":    "Statistics",
	// Mathematics.
	"math":    "Mathematics",
	"math-ph": "Physics",
	// Physics: every physics archive.
	"physics":  "Physics",
	"cond-mat": "Physics",
	"gr-qc":    "Physics",
	"hep-ex":   "Physics",
	"hep-lat":  "Physics",
	"hep-ph":   "Physics",
	"hep-th":   "Physics",
	"nucl-ex":  "Physics",
	"nucl-th":  "Physics",
	"nlin":     "Physics",
	"quant-ph": "Quantum",
	"astro-ph": "Astronomy",
	// Life sciences, economics, finance.
	"q-bio": "Biology",
	"q-fin": "Economics",
	"econ":  "Economics",
}

// Domain returns the domain label of an arXiv category (normally a
// target's primary category): "cs.CL" is "Language", "cs.LG" and "stat.ML"
// are "Machine Learning", "hep-th" is "Physics", "q-bio.NC" is "Biology".
// Unknown categories get "Other" and the empty category DomainUnknown.
func Domain(category string) string {
	category = strings.TrimSpace(category)
	if category == "" {
		return DomainUnknown
	}
	if d, ok := domains[category]; ok {
		return d
	}
	archive, _, _ := strings.Cut(category, ".")
	if d, ok := domains[archive]; ok {
		return d
	}
	return "Other"
}
