package sim

import "strings"

// Word lists the world draws its text from. Every paper gets a coined name
// that no other paper has (see coinedName), so its title, page and idea
// cards are its own even where the other words repeat.

// syllables spell coined names; targets start with the first half and
// other papers with the second, so the two never share a name.
var syllables = []string{
	"ka", "lo", "ven", "tri", "mu", "sar", "del", "quo",
	"ri", "zan", "pel", "or", "bi", "nex", "tu", "gar",
}

var methodWords = []string{
	"Sparse", "Adaptive", "Contrastive", "Hierarchical", "Calibrated", "Streaming", "Causal", "Bayesian",
	"Curriculum", "Modular", "Distilled", "Robust", "Incremental", "Federated", "Symbolic", "Spectral",
}

var objectWords = []string{
	"Routing of Attention Heads", "Memory Replay", "Span Abstention", "Graph Rewiring", "Token Pruning",
	"Reward Shaping", "Feature Attribution", "Latent Alignment", "Sequence Packing", "Kernel Mixing",
	"Evidence Linking", "Policy Smoothing", "Prototype Matching", "Noise Injection", "Query Expansion",
	"Patch Merging", "Label Propagation", "State Compression", "Error Correction", "Cluster Refinement",
}

// topics are per primary category: what a paper's method is for.
var topics = map[string][]string{
	"cs.CL":          {"Low-Resource Translation", "Open-Domain Question Answering", "Dialogue State Tracking", "Summarization of Long Documents", "Code Generation"},
	"cs.LG":          {"Continual Learning", "Offline Reinforcement Learning", "Tabular Prediction", "Time-Series Forecasting", "Federated Optimization"},
	"cs.CV":          {"Video Segmentation", "Few-Shot Detection", "Depth Estimation", "Image Retrieval", "Medical Image Registration"},
	"stat.ML":        {"Conformal Prediction", "Causal Effect Estimation", "Gaussian Process Regression", "Anomaly Detection", "Active Learning"},
	"q-bio.PE":       {"Epidemic Forecasting", "Phylogenetic Inference", "Population Genetics", "Vaccination Planning", "Pathogen Surveillance"},
	"physics.soc-ph": {"Opinion Dynamics", "Mobility Networks", "Contact Tracing", "Urban Scaling", "Information Cascades"},
}

// categories lists the primary categories in a fixed order, with the
// cross-lists each may carry.
var categories = []struct {
	primary string
	cross   []string
}{
	{"cs.CL", []string{"cs.AI", "cs.LG"}},
	{"cs.LG", []string{"stat.ML", "cs.AI"}},
	{"cs.CV", []string{"cs.LG"}},
	{"stat.ML", []string{"cs.LG", "stat.ME"}},
	{"q-bio.PE", []string{"physics.soc-ph"}},
	{"physics.soc-ph", []string{"cs.SI"}},
}

var aspects = []string{
	"stability under distribution shift", "sample efficiency", "calibration of confidence",
	"behaviour at long horizons", "sensitivity to noisy labels", "cost at inference time",
	"robustness to missing inputs", "transfer across domains", "memory footprint", "agreement with human judgement",
}

var conditions = []string{
	"inputs grow longer than those seen in training", "labels are scarce", "the data arrive as a stream",
	"the graph changes over time", "annotators disagree", "compute is capped", "classes are imbalanced",
	"measurements are delayed", "the population mixes unevenly", "the vocabulary shifts",
}

var properties = []string{"stable", "accurate", "efficient", "reliable", "faithful", "robust"}

var metrics = []string{"accuracy", "F1", "calibration error", "throughput", "recall", "coverage"}

var limitations = []string{
	"its reliance on a fixed budget", "the cost of its preprocessing", "untested behaviour on very large inputs",
	"sensitivity to one hyperparameter", "the need for clean validation data", "a single language of evaluation",
}

var venues = []string{
	"Proceedings of the Annual Meeting on Simulated Learning", "Journal of Synthetic Results",
	"Transactions on Invented Methods", "Workshop on Generated Benchmarks", "Conference on Placeholder Studies",
}

var firstNames = []string{
	"Ada", "Bruno", "Chiara", "Dmitri", "Esi", "Farid", "Greta", "Hiro", "Ines", "Jonas",
	"Kaveh", "Lena", "Mateo", "Nadia", "Oskar", "Priya", "Quentin", "Rosa", "Sven", "Tala",
}

var lastNames = []string{
	"Abara", "Bergström", "Castellano", "Dunmore", "Eklund", "Fontaine", "Gallo", "Haddad",
	"Ishikawa", "Jovanović", "Kowalczyk", "Lindqvist", "Moreau", "Nakamura", "Okafor", "Petrov",
	"Quiroga", "Rahman", "Sørensen", "Tanaka",
}

// coinedName spells n in syllables: base 16, four syllables, the first
// chosen from half the list by kind so that targets and other papers never
// share a name. It is unique for n < 8·16³.
func coinedName(kind, n int) string {
	var b strings.Builder
	first := (n / (16 * 16 * 16)) % 8
	if kind == kindBackground {
		first += 8
	}
	b.WriteString(syllables[first])
	for _, d := range []int{(n / 256) % 16, (n / 16) % 16, n % 16} {
		b.WriteString(syllables[d])
	}
	s := b.String()
	return strings.ToUpper(s[:1]) + s[1:]
}
