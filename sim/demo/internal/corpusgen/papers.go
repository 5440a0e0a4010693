package corpusgen

// The papers of the corpus. Everything here is invented for the demo: the
// titles, authors, abstracts, venues' papers and DOIs (10.5555/...) do not
// describe real work. Pages are attached in targets.go and sources.go.

func catalogue() []*Paper {
	return []*Paper{
		// ---- Targets: three dated 2025 (train), three dated 2026 (test).
		{
			Key: "abst", Arxiv: "2503.07215", Versions: []string{"2025-03-10T16:41:09Z"},
			Primary: "cs.CL", Cats: []string{"cs.CL", "cs.AI"}, Comment: "12 pages, 3 figures",
			Title:   "Span-Level Abstention for Retrieval-Augmented Question Answering",
			Authors: []string{"Elena Petrova-Walsh", "Samuel Osei", "Keiko Tanabe"},
			Abstract: "Retrieval-augmented readers answer questions fluently even when the retrieved passages do not support every part of the answer. " +
				"Existing abstention methods decide for the whole answer at once, so a single unsupported clause forces the reader either to keep it or to discard everything. " +
				"We propose span-level abstention: the reader marks each answer span with the evidence that licenses it, and a selective rule removes spans whose estimated risk exceeds a target while keeping the rest. " +
				"On three open-domain benchmarks, span-level abstention retains 24% more correct content than answer-level abstention at the same error rate, and its removals agree with human judgements of unsupported content 79% of the time.",
			Year: 2025, PubDate: "2025-03-10", PubTypes: []string{"JournalArticle"}, Fields: []string{"Computer Science"}, Citations: 4,
		},
		{
			Key: "tokdrop", Arxiv: "2507.02291", Versions: []string{"2025-07-03T09:12:44Z"},
			Primary: "cs.LG", Cats: []string{"cs.LG", "cs.CL"}, Comment: "10 pages",
			Title:   "Curvature-Guided Token Dropping for Efficient Fine-Tuning",
			Authors: []string{"Rasmus Kjeldsen", "Ayesha Siddiqui", "Florian Baptiste"},
			Abstract: "Fine-tuning spends a full backward pass on every token, although most tokens barely change the parameters. " +
				"We propose curvature-guided token dropping, which estimates each token's contribution from the curvature of the loss along its gradient and skips the backward pass for tokens below a moving threshold. " +
				"The estimate is amortised with two random probes per step, so the selection costs less than it saves. " +
				"On five classification and two long-document tasks, dropping 45% of tokens in the backward pass reduces fine-tuning time by 1.5x with an average accuracy change of -0.3 points, and unlike static pruning it does not degrade on long documents.",
			Year: 2025, PubDate: "2025-07-03", PubTypes: []string{"JournalArticle"}, Fields: []string{"Computer Science"}, Citations: 2,
		},
		{
			Key: "memcasc", Arxiv: "2511.04862", Versions: []string{"2025-11-07T14:03:51Z", "2026-02-16T10:27:30Z"},
			Primary: "physics.soc-ph", Cats: []string{"physics.soc-ph", "cs.SI", "nlin.AO"},
			Comment: "v2: adds a comparison with concurrent work on epidemic thresholds; 14 pages, 4 figures",
			Title:   "Memory-Driven Cascades on Bursty Temporal Networks",
			Authors: []string{"Tomás Echeverría", "Ngozi Okafor", "Lena Hartmann"},
			Abstract: "Social contagion models usually let individuals decide on the current state of their neighbourhood, while contacts occur at constant rates. " +
				"Both assumptions fail in data: people remember past exposures, and contacts arrive in bursts. " +
				"We study threshold cascades in which each node integrates exposures with a finite memory kernel on a temporal network whose edges are activated by a bursty renewal process. " +
				"We derive the cascade condition for the coupled system and show that burstiness and memory interact: when the memory kernel is shorter than the typical inter-burst gap, bursts suppress cascades, and when it is longer, they enhance them. " +
				"Simulations on a school contact dataset confirm the predicted crossover.",
			Year: 2025, PubDate: "2025-11-07", PubTypes: []string{"JournalArticle"}, Fields: []string{"Physics", "Computer Science"}, Citations: 1,
		},
		{
			Key: "burstepi", Arxiv: "2601.03318", Versions: []string{"2026-01-08T11:55:02Z"},
			Primary: "q-bio.PE", Cats: []string{"q-bio.PE", "physics.soc-ph"}, Comment: "9 pages, 2 figures",
			Title:   "Household Bursts: Epidemic Thresholds on Clustered Temporal Contact Networks",
			Authors: []string{"Inês Carvalho-Berg", "Dawit Alemu", "Sofia Lindgren"},
			Abstract: "Epidemic thresholds on temporal contact networks are usually computed either for households with constant contact rates or for bursty contacts without household structure. " +
				"We combine both: contacts within households are frequent and regular, while contacts between households arrive in bursts. " +
				"Extending the household next-generation operator to renewal activation, we obtain a threshold that depends on the ratio of the infectious period to the inter-burst gap. " +
				"On empirical contact sequences the corrected threshold is within 12% of simulated values, where mean-field thresholds are off by a factor of two.",
			Year: 2026, PubDate: "2026-01-08", PubTypes: []string{"JournalArticle"}, Fields: []string{"Biology", "Physics"}, Citations: 1,
		},
		{
			Key: "lossdrop", Arxiv: "2603.11207", Versions: []string{"2026-03-17T15:20:18Z"},
			Primary: "cs.LG", Cats: []string{"cs.LG", "stat.ML"}, Comment: "11 pages, 3 tables",
			Title:   "Per-Token Backward Budgets from Gradient Noise",
			Authors: []string{"Haruto Nishimura", "Olga Petrenko", "Benedikt Maier"},
			Abstract: "Skipping the backward pass for unimportant tokens speeds up fine-tuning, but existing selection rules score tokens by curvature, which needs extra probes, and ignore how noisy each token's gradient is. " +
				"We propose per-token backward budgets derived from a token-level gradient noise scale that is computed from quantities already available in the backward pass of the previous step. " +
				"Tokens whose gradients are dominated by noise receive no backward pass, and the remaining tokens are reweighted to keep the gradient unbiased. " +
				"Across seven fine-tuning tasks, budgets match the accuracy of curvature-guided dropping at 1.8x speed-up instead of 1.5x, with no auxiliary router or curvature probes.",
			Year: 2026, PubDate: "2026-03-17", PubTypes: []string{"JournalArticle"}, Fields: []string{"Computer Science"}, Citations: 0,
		},
		{
			Key: "attrabst", Arxiv: "2605.08841", Versions: []string{"2026-05-12T08:47:36Z"},
			Primary: "cs.CL", Cats: []string{"cs.CL", "cs.LG"}, Comment: "13 pages, 2 figures, 4 tables",
			Title:   "Clause-Level Attribution and Abstention for Long-Form Answers",
			Authors: []string{"Maya Goldberg-Otieno", "Jae-Hyun Lim", "Pavel Novák", "Amina Yusuf"},
			Abstract: "Long-form answers mix claims that the retrieved evidence supports with claims it does not. " +
				"Span-level abstention removes unsupported spans from short answers, and attribution-constrained decoding prevents unsupported sentences during generation, but neither handles clauses inside long sentences, and constrained decoding becomes expensive as the number of passages grows. " +
				"We propose clause-level attribution: the generator drafts freely, a parser splits the draft into clauses, each clause is attributed to at most one passage with a single batched entailment pass, and unsupported clauses are removed or hedged. " +
				"On two long-form question answering benchmarks, clause-level attribution raises the share of supported clauses from 71% to 90% at 1.1x the cost of unconstrained generation.",
			Year: 2026, PubDate: "2026-05-12", PubTypes: []string{"JournalArticle"}, Fields: []string{"Computer Science"}, Citations: 0,
		},

		// ---- Targets added so the demo shows topics and pairs: three dated
		// 2023 (train) in cs.IR, whose influential references overlap (one
		// topic corpus at the recipe's settings) and whose uptake differs
		// (one impact-judge pair at the paper's settings).
		{
			Key: "convrw", Arxiv: "2302.06114", Versions: []string{"2023-02-14T10:22:31Z"},
			Primary: "cs.IR", Cats: []string{"cs.IR", "cs.CL"}, Comment: "9 pages, 2 figures",
			Title:   "Retrieval-Aware Rewriting of Conversational Queries",
			Authors: []string{"Ingrid Solberg", "Mateo Ferreira", "Nanami Kato"},
			Abstract: "A question in a conversation often cannot be understood without the turns before it, and passage retrievers trained on stand-alone queries fail on it. " +
				"Query rewriting turns such a question into a self-contained one, but rewriters are trained to imitate human rewrites, which read well and retrieve poorly. " +
				"We train the rewriter against the retriever instead: the reward of a rewrite is the rank the retriever gives the passage that answers the question. " +
				"On two conversational retrieval benchmarks, retrieval-aware rewrites raise recall at 10 by 8 points over imitation rewrites and by 3 points over sparse query expansion.",
			Year: 2023, PubDate: "2023-02-14", PubTypes: []string{"JournalArticle"}, Fields: []string{"Computer Science"}, Citations: 30,
		},
		{
			Key: "histsel", Arxiv: "2304.09572", Versions: []string{"2023-04-20T15:03:12Z"},
			Primary: "cs.IR", Cats: []string{"cs.IR"}, Comment: "10 pages",
			Title:   "Selecting Conversation History for Passage Retrieval",
			Authors: []string{"Kofi Boateng", "Liesel Hoffmann", "Ravi Menon"},
			Abstract: "Conversational retrievers either rewrite the last question or encode the whole history, and both degrade as conversations grow: rewriters lose turns that lie far back, and history encoders drown the question in irrelevant turns. " +
				"We select the history instead. " +
				"A session graph links each turn to the earlier turns it depends on, and a selector keeps only the turns on a path to the current question before dense retrieval. " +
				"On conversations longer than eight turns, history selection improves recall at 10 by 11 points over rewriting, and it never hurts short conversations. " +
				"Retrieval over long conversations thus depends less on how the history is compressed than on which turns are kept.",
			Year: 2023, PubDate: "2023-04-20", PubTypes: []string{"JournalArticle"}, Fields: []string{"Computer Science"}, Citations: 75,
		},
		{
			Key: "clarify", Arxiv: "2305.18236", Versions: []string{"2023-05-30T08:44:09Z"},
			Primary: "cs.IR", Cats: []string{"cs.IR", "cs.HC"}, Comment: "8 pages, 3 tables",
			Title:   "Clarifying Questions from Retriever Uncertainty in Conversational Search",
			Authors: []string{"Yara Haddad", "Bjorn Vasquez"},
			Abstract: "A conversational search system can ask a clarifying question instead of retrieving, but asking too often annoys users and asking too rarely returns useless passages. " +
				"We predict when to ask from the retriever's own uncertainty: the spread of scores among the top passages retrieved for the rewritten question. " +
				"On a benchmark with simulated users, a policy that asks only when the spread is small halves the clarifying questions of an always-ask baseline at the same answer quality. " +
				"Deciding from the retriever rather than from the query alone lets a system ask exactly when its passages do not settle the question.",
			Year: 2023, PubDate: "2023-05-30", PubTypes: []string{"JournalArticle"}, Fields: []string{"Computer Science"}, Citations: 12,
		},

		// ---- Sources with their own pages: language.
		{
			Key: "receipts", Arxiv: "2210.05521", Versions: []string{"2022-10-11T13:08:27Z", "2023-02-20T18:30:05Z"},
			Primary: "cs.CL", Cats: []string{"cs.CL", "cs.IR"}, Comment: "EMNLP 2022 camera-ready",
			Title:   "Reading with Receipts: Evidence-Linked Readers for Open-Domain Question Answering",
			Authors: []string{"Mireille Okonkwo-Hart", "Tobias Lindqvist", "Priya Raghunathan"},
			Abstract: "Open-domain question answering systems are usually judged by whether the final answer string matches a reference, which says nothing about whether the passage the reader relied on actually supports it. " +
				"We introduce evidence-linked readers, which emit an answer together with a pointer to the span that licenses it, and train them with a joint objective over answers and pointers. " +
				"On three open-domain benchmarks, evidence-linked readers match the exact-match accuracy of standard readers while producing pointers that human raters judge as supporting the answer 81% of the time. " +
				"The pointers also make errors auditable: most wrong answers come with pointers to passages that do not contain them.",
			Venue: "Conference on Empirical Methods in Natural Language Processing", VenueType: "conference",
			Year: 2022, PubDate: "2022-10-11", PubTypes: []string{"JournalArticle", "Conference"}, Fields: []string{"Computer Science"}, Citations: 143,
		},
		{
			Key: "tokconf", Arxiv: "2306.11842", Versions: []string{"2023-06-20T17:14:40Z"},
			Primary: "cs.CL", Cats: []string{"cs.CL", "cs.LG"}, JournalRef: "Transactions of the ACL 12 (2024) 88-104",
			Title:   "Token-Level Confidence Is Not Answer-Level Confidence: Calibration Gaps in Generative Readers",
			Authors: []string{"Henrik Aalto", "Sun-Hee Park"},
			Abstract: "Generative readers assign probabilities to tokens, and it is common to turn these into a confidence for the whole answer by multiplying or averaging them. " +
				"We show that such aggregates are poorly calibrated at the answer level: on four question answering datasets, the expected calibration error of length-normalised sequence probability is between two and five times that of a classifier-style reader. " +
				"The gap is largest for long answers and for answers copied from retrieved passages, where high token probabilities reflect copying rather than correctness. " +
				"We characterise the failure and release a diagnostic suite.",
			DOI: "10.5555/tacl.2024.0088", Venue: "Transactions of the Association for Computational Linguistics", VenueType: "journal",
			Journal: "Transactions of the Association for Computational Linguistics", Volume: "12", Pages: "88-104",
			Year: 2024, PubDate: "2024-01-15", PubTypes: []string{"JournalArticle"}, Fields: []string{"Computer Science"}, Citations: 97,
		},
		{
			Key: "spancheck", Arxiv: "2402.08113", Versions: []string{"2024-02-12T10:01:33Z"},
			Primary: "cs.CL", Cats: []string{"cs.CL"}, Comment: "Dataset paper; 8 pages",
			Title:   "SpanCheck: A Benchmark of Human-Verified Evidence Spans for Question Answering",
			Authors: []string{"Lucía Ferreira-Quist", "Daniel Mbeki", "Jonas Weidmann"},
			Abstract: "Datasets for evidence-based question answering rarely say which part of a passage supports an answer, and when they do, the spans are produced automatically. " +
				"SpanCheck contains 12,400 question-answer pairs over encyclopedia and news passages in which two annotators independently marked the minimal supporting span and a third adjudicated disagreements. " +
				"We report inter-annotator agreement, characterise questions whose support is spread over several spans, and show that automatic span heuristics disagree with the adjudicated spans on 37% of items.",
			Year: 2024, PubDate: "2024-02-12", PubTypes: []string{"JournalArticle"}, Fields: []string{"Computer Science"}, Citations: 31,
		},
		{
			// Revised after the first target citing it (2025-03-10) and
			// before the second: each reads the version of its time.
			Key: "hedge", Arxiv: "2409.13370", Versions: []string{"2024-09-20T12:45:10Z", "2025-08-14T09:31:52Z"}, PageVersions: []int{1, 2},
			Primary: "cs.CL", Cats: []string{"cs.CL", "cs.AI"},
			Title:   "Abstain or Hedge? Learning When Generative Models Should Say Less",
			S2Title: "Abstain or Hedge: Learning When Generative Models Should Say Less",
			Authors: []string{"Kofi Mensah-Bright", "Ilse Vandermeer", "Rahul Dasgupta"},
			Abstract: "When a generative model is unsure, it can refuse to answer or it can answer with less: a shorter, more general claim that is more likely to be true. " +
				"We frame this choice as selective generation over a lattice of increasingly general answers and learn a policy that picks the most specific answer whose estimated risk stays under a target. " +
				"On biography and science question benchmarks the learned policy keeps 30% more content than abstention at the same error rate. " +
				"The policy operates on whole answers, however, and cannot withhold one unsupported clause while keeping the rest.",
			Year: 2024, PubDate: "2024-09-20", PubTypes: []string{"JournalArticle"}, Fields: []string{"Computer Science"}, Citations: 58,
		},
		{
			Key: "citedec", Arxiv: "2406.15590", Versions: []string{"2024-06-21T16:22:58Z"},
			Primary: "cs.CL", Cats: []string{"cs.CL"},
			Title:   "Attribution-Constrained Decoding for Grounded Generation",
			Authors: []string{"Marta Szabó-Lind", "Oluwaseun Adeyemi"},
			Abstract: "Grounded generation systems are asked to cite the passages that support what they say, but citations are usually added after generation and often point to passages that do not support the claim. " +
				"We propose attribution-constrained decoding, which interleaves generation with an entailment check and only allows a sentence to be emitted together with a passage that entails it. " +
				"On long-form question answering, constrained decoding raises the share of supported sentences from 61% to 88% at a 1.4x decoding cost, but the cost grows with the number of candidate passages.",
			Year: 2024, PubDate: "2024-06-21", PubTypes: []string{"JournalArticle"}, Fields: []string{"Computer Science"}, Citations: 44,
		},

		// ---- Sources with their own pages: learning.
		{
			Key: "curvtok", Arxiv: "2305.14406", Versions: []string{"2023-05-23T09:40:19Z"},
			Primary: "cs.LG", Cats: []string{"cs.LG", "cs.CL"}, Comment: "ICML 2023",
			Title:   "Loss Curvature Predicts Which Tokens Matter During Fine-Tuning",
			Authors: []string{"Ingrid Solberg", "Mateo Ruiz-Carmona", "Ji-Woo Han"},
			Abstract: "Most tokens in a fine-tuning batch contribute little to the parameter update. " +
				"We show that a token's contribution is predicted well by the curvature of the loss along its own gradient direction, estimated with a single Hessian-vector product per sequence. " +
				"Across six fine-tuning tasks, the 30% of tokens with the highest curvature account for over 80% of the change in validation loss. " +
				"We use the estimate only for analysis; computing it costs more than the backward pass it could save.",
			Venue: "International Conference on Machine Learning", VenueType: "conference",
			Year: 2023, PubDate: "2023-05-23", PubTypes: []string{"JournalArticle", "Conference"}, Fields: []string{"Computer Science"}, Citations: 76,
		},
		{
			Key: "statprune", Arxiv: "2211.09930", Versions: []string{"2022-11-17T19:05:47Z"},
			Primary: "cs.LG", Cats: []string{"cs.LG"},
			Title:   "Static Token Pruning for Encoder Models",
			Authors: []string{"Beatriz Almeida", "Tomasz Wróbel"},
			Abstract: "We prune input tokens of encoder models before fine-tuning, using attention statistics collected from the pretrained model. " +
				"Pruning 40% of tokens speeds up fine-tuning by 1.6x with less than one point of accuracy loss on classification benchmarks. " +
				"Because the pruning decision is made once, before any task gradient is seen, it cannot adapt as the model learns which tokens matter for the task, and accuracy drops sharply on tasks whose relevant tokens differ from those the pretrained model attends to.",
			Year: 2022, PubDate: "2022-11-17", PubTypes: []string{"JournalArticle"}, Fields: []string{"Computer Science"}, Citations: 39,
		},
		{
			Key: "hutch", Arxiv: "2404.06012", Versions: []string{"2024-04-09T13:33:21Z"},
			Primary: "cs.LG", Cats: []string{"cs.LG", "math.OC"},
			Title:   "Hutchinson Probes at Scale: Cheap Diagonal Curvature Estimates for Deep Networks",
			Authors: []string{"Naledi Khumalo", "Pierre-Antoine Vidal"},
			Abstract: "Hutchinson's estimator recovers the diagonal of a matrix from random matrix-vector products. " +
				"We study it as a practical tool for deep networks and show that two Rademacher probes per step, amortised across steps with an exponential moving average, estimate the Hessian diagonal of transformer language models to within 10% relative error at 4% of the cost of a training step. " +
				"We provide variance bounds that depend on the off-diagonal mass of the Hessian and a fused implementation.",
			Year: 2024, PubDate: "2024-04-09", PubTypes: []string{"JournalArticle"}, Fields: []string{"Computer Science", "Mathematics"}, Citations: 22,
		},
		{
			Key: "mod", Arxiv: "2410.17754", Versions: []string{"2024-10-23T17:58:03Z"},
			Primary: "cs.LG", Cats: []string{"cs.LG", "cs.CL"},
			Title:   "Routing Depth: Per-Token Compute Allocation in Transformers",
			Authors: []string{"Aiyana Redcloud", "Lars Østergaard"},
			Abstract: "Transformers spend the same computation on every token. " +
				"We add a learned router before each block that lets a token skip the block, trained with an auxiliary loss that fixes the fraction of tokens processed. " +
				"At a 50% capacity, routed models match the perplexity of dense models at 70% of the training FLOPs. " +
				"The router is trained jointly from scratch; we find it unstable when added to a pretrained model during fine-tuning, where it collapses to routing the same tokens at every layer.",
			Year: 2024, PubDate: "2024-10-23", PubTypes: []string{"JournalArticle"}, Fields: []string{"Computer Science"}, Citations: 65,
		},
		{
			Key: "gns", Arxiv: "2502.01877", Versions: []string{"2025-02-03T11:16:49Z"},
			Primary: "cs.LG", Cats: []string{"cs.LG", "stat.ML"},
			Title:   "The Gradient Noise Scale as a Per-Example Budget Signal",
			Authors: []string{"Esi Boateng", "Viktor Halvorsen"},
			Abstract: "The gradient noise scale measures how much a batch's gradient would change if the batch were resampled. " +
				"We show that a per-example version, computed from quantities already available in the backward pass, identifies examples whose gradients are dominated by noise. " +
				"Skipping the backward pass for such examples saves 25% of compute in image classification with no loss in accuracy. " +
				"The signal is defined per example; we did not study whether it transfers to tokens within a sequence.",
			Year: 2025, PubDate: "2025-02-03", PubTypes: []string{"JournalArticle"}, Fields: []string{"Computer Science", "Mathematics"}, Citations: 12,
		},

		// ---- Sources with their own pages: networks and epidemics.
		{
			Key: "bursty", Arxiv: "2208.03317", Versions: []string{"2022-08-05T08:21:14Z"},
			Primary: "physics.soc-ph", Cats: []string{"physics.soc-ph", "cond-mat.stat-mech"},
			JournalRef: "Phys. Rev. E 107, 034301 (2023)",
			Title:      "Temporal Contact Networks with Bursty Activation on Erdős–Rényi Backbones",
			S2Title:    `Temporal Contact Networks with Bursty Activation on Erd\H{o}s-R\'enyi Backbones`,
			Authors:    []string{"Hanna Virtanen", "Chidi Eze", "Marco Bellandi"},
			Abstract: "Contacts between people switch on and off in bursts rather than at a constant rate. " +
				"We introduce a model in which the edges of a static random backbone are activated by a renewal process with heavy-tailed inter-event times and derive the distribution of time-respecting path lengths. " +
				"Burstiness slows spreading processes on the model by up to an order of magnitude compared to Poisson activation with the same mean rate. " +
				"The model has no memory at the level of nodes: each edge's activation is independent of what its endpoints did before.",
			DOI: "10.5555/pre.2023.034301", Venue: "Physical Review E", VenueType: "journal", Journal: "Physical Review E", Volume: "107", Pages: "034301",
			Year: 2023, PubDate: "2023-03-02", PubTypes: []string{"JournalArticle"}, Fields: []string{"Physics"}, Citations: 84,
		},
		{
			Key: "memory", Arxiv: "2301.12876", Versions: []string{"2023-01-30T15:49:02Z"},
			Primary: "physics.soc-ph", Cats: []string{"physics.soc-ph", "nlin.AO"},
			Title:   "Opinion Dynamics with Finite Memory Kernels",
			Authors: []string{"Amara Diallo", "Sebastian Krüger"},
			Abstract: "In most models of opinion dynamics an agent's next opinion depends only on the current opinions of its neighbours. " +
				"We let agents integrate past exposures with a finite memory kernel and show, with a mean-field analysis and simulations, that memory turns the continuous consensus transition into a discontinuous one with hysteresis. " +
				"The kernel length controls the width of the hysteresis loop. " +
				"All results assume a static, fully mixed or lattice population.",
			Year: 2023, PubDate: "2023-01-30", PubTypes: []string{"JournalArticle"}, Fields: []string{"Physics"}, Citations: 27,
		},
		{
			Key: "household", Arxiv: "2405.02210", Versions: []string{"2024-05-03T07:37:45Z"},
			Primary: "q-bio.PE", Cats: []string{"q-bio.PE", "physics.soc-ph"},
			Title:   "Household Clustering Shifts Epidemic Thresholds in Metapopulation Models",
			Authors: []string{"Tariq Haddad", "Min-Jun Seo", "Élodie Marchand"},
			Abstract: "Households concentrate contacts, so that infections within a household are partly redundant. " +
				"We extend a metapopulation model with an explicit household layer and compute the epidemic threshold as the spectral radius of a next-generation operator over households and patches. " +
				"Clustering raises the threshold by 10-35% for realistic household size distributions. " +
				"The model assumes contacts occur at constant rates, so it cannot capture how the timing of household and community contacts interacts.",
			Year: 2024, PubDate: "2024-05-03", PubTypes: []string{"JournalArticle"}, Fields: []string{"Biology", "Medicine"}, Citations: 19,
		},
		{
			Key: "meanfield", Arxiv: "2410.05566", Versions: []string{"2024-10-08T14:11:26Z"},
			Primary: "physics.soc-ph", Cats: []string{"physics.soc-ph", "q-bio.PE"},
			Title:   "Bursts, Memory and the Failure of Mean-Field Epidemic Thresholds",
			Authors: []string{"Giulia Ferraro", "Yaw Owusu"},
			Abstract: "Mean-field epidemic thresholds are computed from average contact rates. " +
				"We compare them with thresholds measured in simulations on empirical contact sequences from schools, hospitals and workplaces and find that mean-field theory overestimates the threshold by a factor of up to three. " +
				"We trace the discrepancy to correlations between successive contacts of the same individual, which mean-field theory ignores, but we do not propose a corrected theory.",
			Year: 2024, PubDate: "2024-10-08", PubTypes: []string{"JournalArticle"}, Fields: []string{"Physics", "Biology"}, Citations: 33,
		},

		// ---- Cited papers that are not on arXiv: Semantic Scholar records only.
		{
			Key:     "reject",
			Title:   "Selective Classification with a Reject Option: Risk–Coverage Trade-offs Revisited",
			Authors: []string{"Wen-Jie Holm", "Adaeze Nwosu"},
			Abstract: "A classifier with a reject option may abstain on inputs it is unsure about, trading coverage for risk. " +
				"We revisit the risk-coverage curve as the object of study and show that the common practice of thresholding a softmax score is optimal only when the score is calibrated with respect to the selective risk, not the overall risk. " +
				"We derive a plug-in rule that targets a desired risk level with finite-sample guarantees and show empirically that it dominates score thresholding on tabular and text classification tasks.",
			Venue: "Journal of Machine Learning Research", VenueType: "journal", Journal: "Journal of Machine Learning Research", Volume: "20", Pages: "1-34",
			Year: 2019, PubDate: "", PubTypes: []string{"JournalArticle"}, Fields: []string{"Computer Science", "Mathematics"}, Citations: 412,
		},
		{
			Key:     "secondorder",
			Title:   "Second-Order Methods for Large-Scale Learning",
			Authors: []string{"Gunnar Eide", "Marisol Vega"},
			DOI:     "10.5555/978-0-0000-1801-4", Publisher: "Springer",
			Year: 2018, PubDate: "2018-06-01", PubTypes: []string{"Book"}, Fields: []string{"Computer Science", "Mathematics"}, Citations: 230,
			NoAbstract: true,
		},
		{
			Key:     "impsamp",
			Title:   "Importance Sampling for Minibatch Selection: A Variance View",
			Authors: []string{"Tendai Moyo", "Ji-Ho Kang"},
			Abstract: "Sampling training examples in proportion to an estimate of their gradient norm reduces the variance of stochastic gradients, but the estimates are expensive and stale. " +
				"We analyse the bias introduced by stale importance weights and show that the variance reduction survives when weights are refreshed at a rate tied to the change in the loss. " +
				"Experiments on language modelling and image classification confirm a 1.3-1.8x reduction in steps to a target loss.",
			DOI: "10.5555/tmlr.2023.0871", Venue: "Transactions on Machine Learning Research", VenueType: "journal",
			Journal: "Transactions on Machine Learning Research",
			Year:    2023, PubDate: "2023-08-14", PubTypes: []string{"JournalArticle"}, Fields: []string{"Computer Science"}, Citations: 41,
		},
		{
			Key:     "threshold",
			Title:   "Thresholds and Cascades in Social Contagion",
			Authors: []string{"Rebecca Lindholm", "Samir Haddadi"},
			Abstract: "We study a model in which each individual adopts a behaviour once the fraction of its neighbours who have adopted exceeds a personal threshold. " +
				"On random networks, global cascades occur only inside a window of mean degrees whose boundaries we compute with a generating-function method. " +
				"Near the upper boundary cascades are rare but very large. " +
				"The analysis treats the network as static and each decision as depending only on the current state of the neighbourhood.",
			DOI: "10.5555/jms.2011.0352", Venue: "Journal of Mathematical Sociology", VenueType: "journal",
			Journal: "Journal of Mathematical Sociology", Volume: "35", Pages: "201-229",
			Year: 2011, PubDate: "2011-04-01", PubTypes: []string{"JournalArticle"}, Fields: []string{"Sociology", "Physics"}, Citations: 1210,
		},
		{
			Key:     "contactbook",
			Title:   "Contact Structure and Epidemic Spread",
			Authors: []string{"Helena Marsh"},
			Abstract: "A monograph on how the structure of contacts between individuals shapes the spread of infectious disease. " +
				"It develops the next-generation operator for structured populations, in which the epidemic threshold is the point where the spectral radius of the operator equals one, and applies it to households, workplaces and networks. " +
				"Contact rates are treated as constant throughout; temporal variation is discussed only qualitatively.",
			DOI: "10.5555/oup.2016.0119", Publisher: "Oxford University Press",
			Year: 2016, PubDate: "", PubTypes: []string{"Book"}, Fields: []string{"Biology", "Mathematics"}, Citations: 655,
		},
		{
			Key:     "school",
			Title:   "High-Resolution Proximity Measurements in a Secondary School",
			Authors: []string{"Élise Fournier", "Mthunzi Dlamini", "Paolo Greco"},
			Abstract: "We recorded face-to-face proximity between 310 students and teachers of a secondary school over five days with wearable sensors at a 20-second resolution. " +
				"We describe the data, the distributions of contact durations and inter-contact times, and the mixing between classes, and release the anonymised contact sequence.",
			DOI: "10.5555/pone.2014.0921", Venue: "PLOS ONE", VenueType: "journal", Journal: "PLOS ONE", Volume: "9", Pages: "e0921",
			Year: 2014, PubDate: "2014-09-21", PubTypes: []string{"JournalArticle", "Dataset"}, Fields: []string{"Medicine", "Computer Science"}, Citations: 388,
		},
		{
			Key:     "nqlike",
			Title:   "OpenQuestions: A Corpus of Naturally Occurring Search Questions",
			S2Title: "OpenQuestions: a Corpus of Naturally Occurring Search Questions",
			Authors: []string{"Hyun-Woo Baek", "Ana Lima", "Thomas Keller"},
			Abstract: "We present a corpus of 240,000 questions issued to a web search engine, each paired with the passage an annotator selected as containing the answer and a short answer string. " +
				"Questions were sampled from anonymised query logs and filtered for well-formedness.",
			DOI: "10.5555/lrec.2020.0118", Venue: "International Conference on Language Resources and Evaluation", VenueType: "conference",
			Year: 2020, PubDate: "2020-05-11", PubTypes: []string{"Conference"}, Fields: []string{"Computer Science"}, Citations: 520,
		},

		{
			Key:     "sparsexp",
			Title:   "Sparse Expansion of Queries with Learned Term Weights",
			Authors: []string{"Maren Aasen", "Diego Salgado"},
			Abstract: "We expand queries with terms whose weights a model learns from relevance judgements, keeping the index sparse so that expansion runs on an inverted index. " +
				"Expansion recovers vocabulary that a short query lacks and raises recall on ad hoc retrieval benchmarks by 6 points over unexpanded queries. " +
				"The expansion is computed from the query alone.",
			DOI: "10.5555/sigir.2022.0412", Venue: "International ACM SIGIR Conference on Research and Development in Information Retrieval", VenueType: "conference",
			Year: 2022, PubDate: "2022-07-11", PubTypes: []string{"Conference"}, Fields: []string{"Computer Science"}, Citations: 64,
		},
		{
			Key:     "askwhen",
			Title:   "Predicting When Searchers Need Clarification",
			Authors: []string{"Chiara Lombardi", "Thabo Nkosi", "Wei Zhang"},
			Abstract: "We study when users of a search engine would welcome a clarifying question. " +
				"From interaction logs we label queries after which users reformulated because the results were off target, and train a classifier on features of the query alone to predict them. " +
				"The classifier identifies queries needing clarification with an F1 of 0.62 and does not use the retrieved results.",
			DOI: "10.5555/chiir.2022.0077", Venue: "Conference on Human Information Interaction and Retrieval", VenueType: "conference",
			Year: 2022, PubDate: "2022-03-14", PubTypes: []string{"Conference"}, Fields: []string{"Computer Science"}, Citations: 37,
		},
		{
			Key:     "crowdrw",
			Title:   "Crowdsourced Rewrites of Conversational Questions",
			Authors: []string{"Marta Kowalska", "Idris Bello"},
			Abstract: "We collect stand-alone rewrites of 40,000 questions from information-seeking conversations, written by crowd workers who see the preceding turns. " +
				"A rewrite must be answerable without the conversation and keep the question's intent. " +
				"We describe the collection protocol, agreement between workers and the kinds of context that rewrites restore.",
			DOI: "10.5555/acl.2020.0331", Venue: "Annual Meeting of the Association for Computational Linguistics", VenueType: "conference",
			Year: 2020, PubDate: "2020-07-06", PubTypes: []string{"Conference"}, Fields: []string{"Computer Science"}, Citations: 150,
		},
		{
			Key:      "convqa",
			Title:    "TalkSearch: A Corpus of Information-Seeking Conversations",
			Authors:  []string{"Nadia Rahman", "Oskar Lind"},
			Abstract: "We release 8,000 information-seeking conversations between crowd workers playing a user and an expert with access to a passage collection, with the passages the expert consulted for each turn marked.",
			DOI:      "10.5555/lrec.2020.0540", Venue: "International Conference on Language Resources and Evaluation", VenueType: "conference",
			Year: 2020, PubDate: "2020-05-13", PubTypes: []string{"Conference"}, Fields: []string{"Computer Science"}, Citations: 240,
		},

		// ---- Background references on arXiv without a page in the corpus.
		bg("densehop", "2104.07730", "2021-04-15T12:00:31Z", "cs.CL", []string{"cs.CL", "cs.IR"},
			"Dense Passage Indexes for Multi-Hop Retrieval", []string{"Yusuf Demir", "Clara Bianchi"},
			"We build dense passage indexes whose entries are updated with the passages retrieved at earlier hops, so that multi-hop questions can be answered with a single index. "+
				"Queries and passages are encoded by two encoders trained with in-batch negatives, and the index is searched by maximum inner product. "+
				"Recall at 20 improves by 9 points on two multi-hop benchmarks.", 2021, 210),
		bg("verifier", "2311.02046", "2023-11-03T09:30:00Z", "cs.CL", []string{"cs.CL"},
			"Learned Verifiers for Retrieval-Augmented Generation", []string{"Anika Sharma", "Ethan Kowalczyk"},
			"We train a verifier that scores a generated answer against the retrieved passages and use it to rerank sampled answers. "+
				"Reranking reduces unsupported answers by a third on open-domain question answering.", 2023, 48),
		bg("llmtool", "2308.14502", "2023-08-28T16:45:12Z", "cs.CL", []string{"cs.CL", "cs.IR"},
			"OpenReader: An Open-Source Toolkit for Retrieval-Augmented Reading", []string{"Jun Watanabe", "Felix Dubois", "Rosa Martínez"},
			"OpenReader is a toolkit that packages retrievers, readers and evaluation scripts for retrieval-augmented question answering behind one configuration format.", 2023, 95),
		bg("lfqa", "2305.09981", "2023-05-16T10:12:55Z", "cs.CL", []string{"cs.CL"},
			"Evaluating Long-Form Question Answering: A Survey", []string{"Noor Haddad", "Pieter de Vries"},
			"We survey how long-form answers are evaluated, from reference-based overlap metrics to human and model-based judgements of factuality and completeness, and discuss their disagreements.", 2023, 61),
		bg("qrewrite", "2109.03362", "2021-09-08T14:20:17Z", "cs.IR", []string{"cs.IR", "cs.CL"},
			"Learning to Rewrite Conversational Queries for Passage Retrieval", []string{"Emre Yilmaz", "Johanna Virtanen"},
			"Questions in a conversation leave out what earlier turns said, so retrievers built for stand-alone queries miss their answers. "+
				"We rewrite each question of a conversation into a self-contained query with a sequence-to-sequence model trained on human rewrites, and retrieve passages for the rewrite with an off-the-shelf retriever. "+
				"Rewriting closes most of the gap between conversational and stand-alone questions on a conversational retrieval benchmark.", 2021, 180),
		bg("sessgraph", "2206.11108", "2022-06-22T09:51:40Z", "cs.IR", []string{"cs.IR", "cs.LG"},
			"Session Graphs for Multi-Turn Retrieval", []string{"Ahmed Karimi", "Sunniva Dahl"},
			"Searchers refine earlier queries, and a model that treats a session as a flat sequence cannot tell which query a new one refines. "+
				"We represent a search session as a graph whose nodes are queries and whose edges link a query to the earlier queries it refines, and learn the graph from reformulation logs. "+
				"The graph predicts which earlier query a new one refines with 84% accuracy.", 2022, 52),
		bg("lateint", "2112.04417", "2021-12-08T17:33:21Z", "cs.IR", []string{"cs.IR", "cs.CL"},
			"Late Interaction for Efficient Passage Ranking", []string{"Sofie Jansen", "Kenji Mori"},
			"We score a passage against a query by matching their token embeddings at ranking time, which keeps most of the accuracy of cross-encoders at a fraction of their cost.", 2021, 133),
		bg("convdense", "2110.05793", "2021-10-12T11:06:48Z", "cs.IR", []string{"cs.IR"},
			"Dense Retrieval for Conversational Questions without Rewriting", []string{"Ola Nordmann", "Amara Eze"},
			"We encode a conversational question together with its preceding turns into one dense query vector and train the encoder on conversational relevance labels, without rewriting the question.", 2021, 88),
		bg("usersim", "2207.01234", "2022-07-04T13:48:02Z", "cs.IR", []string{"cs.IR", "cs.HC"},
			"Simulating Users for Conversational Search Evaluation", []string{"Greta Lund", "Farid Hosseini"},
			"We simulate searchers who answer clarifying questions from a hidden information need, and show that system rankings under simulation agree with rankings from a user study.", 2022, 45),
		bg("adam", "2108.04133", "2021-08-09T18:03:27Z", "cs.LG", []string{"cs.LG", "math.OC"},
			"Adaptive Moment Methods Revisited", []string{"Katarina Novak", "Leon Brandt"},
			"We revisit adaptive moment methods and show that their advantage over momentum methods on language models comes mostly from per-coordinate step sizes early in training.", 2021, 150),
		bg("lora", "2203.05577", "2022-03-10T13:25:40Z", "cs.LG", []string{"cs.LG", "cs.CL"},
			"Rank-Constrained Adapters for Parameter-Efficient Fine-Tuning", []string{"Meiling Zhou", "Arjun Patel"},
			"We fine-tune pretrained transformers by learning low-rank updates to their weight matrices, training fewer than 1% of the parameters with accuracy close to full fine-tuning.", 2022, 301),
		bg("longbench", "2309.15125", "2023-09-26T08:58:14Z", "cs.CL", []string{"cs.CL", "cs.LG"},
			"LongDocs: A Benchmark for Document-Level Classification", []string{"Sara Eriksson", "Omar Farouk"},
			"LongDocs collects six classification tasks whose inputs exceed 4,000 tokens and whose labels depend on information spread across the document.", 2023, 57),
		bg("flash", "2307.08834", "2023-07-17T20:41:09Z", "cs.LG", []string{"cs.LG", "cs.DC"},
			"Fused Kernels for IO-Aware Transformer Blocks", []string{"Rui Costa", "Hannah Becker"},
			"We fuse the operations of a transformer block into kernels that keep intermediate results in on-chip memory, reducing memory traffic and wall-clock time of training by 1.4x.", 2023, 118),
		bg("hawkes", "2107.11893", "2021-07-25T14:37:52Z", "physics.soc-ph", []string{"physics.soc-ph", "stat.AP"},
			"Self-Exciting Point Processes for Bursty Social Activity", []string{"Luca Moretti", "Aisha Bello"},
			"We fit self-exciting point processes to communication and contact records and show that a two-timescale kernel reproduces both their burstiness and their daily rhythm.", 2021, 73),
		bg("sir", "2012.04471", "2020-12-08T11:19:06Z", "physics.soc-ph", []string{"physics.soc-ph", "q-bio.PE"},
			"Exact Solutions of SIR Dynamics on Small Networks", []string{"Jonas Berg", "Fatima Zahra El Idrissi"},
			"We solve the stochastic susceptible-infected-recovered model exactly on networks of up to twelve nodes and use the solutions to test pair approximations.", 2020, 46),
		bg("vax", "2309.06120", "2023-09-12T17:02:48Z", "q-bio.PE", []string{"q-bio.PE", "physics.soc-ph"},
			"Targeted Vaccination on Temporal Contact Networks", []string{"Carmen Ortiz", "Kwame Asante"},
			"We compare vaccination strategies that target individuals by their activity in a past observation window and find that recent activity predicts future transmission better than cumulative degree.", 2023, 38),
	}
}

// bg makes a background arXiv paper: a preprint without a page here.
func bg(key, id, v1, primary string, cats []string, title string, authors []string, abstract string, year, cites int) *Paper {
	fields := []string{"Computer Science"}
	if primary == "physics.soc-ph" || primary == "q-bio.PE" {
		fields = []string{"Physics"}
	}
	return &Paper{
		Key: key, Arxiv: id, Versions: []string{v1}, Primary: primary, Cats: cats,
		Title: title, Authors: authors, Abstract: abstract,
		Year: year, PubDate: v1[:10], PubTypes: []string{"JournalArticle"}, Fields: fields, Citations: cites,
	}
}
