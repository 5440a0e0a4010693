package dataset

import (
	"cmp"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/groundwork/curate/holdout"
	"github.com/groundwork/curate/internal/pipeline"
	"github.com/groundwork/curate/record"
)

// FormatInnoEval is the layout of idea-evaluation benchmarks in the
// manner of InnoEval ("InnoEval: On Research Idea Evaluation as a
// Knowledge-Grounded, Multi-Perspective Reasoning Problem"): per target,
// its idea as the six-tuple of claims, the timestamp that fixes the
// standpoint of evaluation (knowledge_cutoff), the knowledge before it
// (the instance's sources, as idea cards) and after it (the papers that
// cited the target later).
const FormatInnoEval = "innoeval"

// InnoEvalRow is one row of FormatInnoEval: one target.
type InnoEvalRow struct {
	InstanceID string `json:"instance_id" parquet:"instance_id"`
	// Split is the export's split (train, validation, test); DatasetSplit
	// the dataset's.
	Split        string `json:"split" parquet:"split"`
	DatasetSplit string `json:"dataset_split" parquet:"dataset_split"`
	// KnowledgeCutoff is the timestamp of the idea (YYYY-MM-DD): the
	// target's arXiv v1 date.
	KnowledgeCutoff string           `json:"knowledge_cutoff" parquet:"knowledge_cutoff"`
	Idea            record.IdeaTuple `json:"idea" parquet:"idea"`
	// PreKnowledge are the instance's sources, numbered as in its model
	// input.
	PreKnowledge []KnowledgeSource `json:"pre_knowledge" parquet:"pre_knowledge,list"`
	// PostKnowledge are the papers citing the target first published
	// after the cutoff, the most influential first (empty without
	// --post-knowledge).
	PostKnowledge []record.CitingPaper `json:"post_knowledge" parquet:"post_knowledge,list"`
}

// KnowledgeSource is a source of the target as pre-knowledge: which paper,
// which version of it was read and its date, and its idea card.
type KnowledgeSource struct {
	DocNumber int    `json:"doc_number" parquet:"doc_number"`
	ArxivID   string `json:"arxiv_id,omitempty" parquet:"arxiv_id,optional"`
	S2PaperID string `json:"s2_paper_id,omitempty" parquet:"s2_paper_id,optional"`
	DOI       string `json:"doi,omitempty" parquet:"doi,optional"`
	// Version and VersionDate are the version whose text was carded and
	// its date, when the dataset knows them (the knowledge cut);
	// RevisedAfterCutoff says it is dated after the cutoff.
	Version            string      `json:"version,omitempty" parquet:"version,optional"`
	VersionDate        string      `json:"version_date,omitempty" parquet:"version_date,optional"`
	RevisedAfterCutoff bool        `json:"revised_after_cutoff,omitempty" parquet:"revised_after_cutoff,optional"`
	Title              string      `json:"title,omitempty" parquet:"title,optional"`
	Year               int         `json:"year,omitempty" parquet:"year,optional"`
	TextLevel          string      `json:"text_level" parquet:"text_level"`
	Card               record.Card `json:"card" parquet:"card"`
}

// FormatFields returns the fields stages add to instances that an export
// of format reads (ReadFields fills them): the idea tuple and the
// post-knowledge for FormatInnoEval, none for the trainer formats.
func FormatFields(format string) []*pipeline.Field {
	if format != FormatInnoEval {
		return nil
	}
	return []*pipeline.Field{
		pipeline.FieldOf[record.Idea](record.FieldIdea, record.IdeaTupleSets.Name(), ""),
		pipeline.FieldOf[[]record.CitingPaper](record.FieldPostKnowledge, record.PostKnowledgeSets.Name(), ""),
	}
}

// instanceIdea is in's idea, and whether it has a claim in every
// required field (an incomplete one is left out of the export). An
// instance without the field is an error: its dataset was built without
// the tuples stage.
func instanceIdea(in record.Instance) (record.IdeaTuple, bool, error) {
	raw, ok := in.Fields[record.FieldIdea]
	if !ok {
		return record.IdeaTuple{}, false, fmt.Errorf("instance %s has no %s: the dataset was built without the tuples stage", in.InstanceID, record.FieldIdea)
	}
	var v record.Idea
	if err := json.Unmarshal(raw, &v); err != nil {
		return record.IdeaTuple{}, false, fmt.Errorf("instance %s: %s: %w", in.InstanceID, record.FieldIdea, err)
	}
	t := lists(v.IdeaTuple)
	return t, len(t.Missing()) == 0, nil
}

// lists gives every list of t a value: Parquet gives back none for an
// empty list, and the JSONL rows say [] for it.
func lists(t record.IdeaTuple) record.IdeaTuple {
	for _, l := range []*[]record.Claim{&t.Summary, &t.Motivations, &t.ResearchQuestions, &t.ExperimentalSettings, &t.ExpectedResults} {
		if *l == nil {
			*l = []record.Claim{}
		}
	}
	if t.Methods == nil {
		t.Methods = []record.MethodClaim{}
	}
	return t
}

// incompleteIdeas lists the instances an innoeval export leaves out:
// those whose idea lacks a required field.
func incompleteIdeas(instances []record.Instance) ([]string, error) {
	var out []string
	for _, in := range instances {
		_, ok, err := instanceIdea(in)
		if err != nil {
			return nil, err
		}
		if !ok {
			out = append(out, in.InstanceID)
		}
	}
	return out, nil
}

func innoevalRows(instances []record.Instance, splits []string) ([]InnoEvalRow, error) {
	out := make([]InnoEvalRow, 0, len(instances))
	for i, in := range instances {
		idea, ok, err := instanceIdea(in)
		if err != nil {
			return nil, err
		}
		if !ok {
			continue
		}
		post := []record.CitingPaper{}
		if raw, ok := in.Fields[record.FieldPostKnowledge]; ok {
			if err := json.Unmarshal(raw, &post); err != nil {
				return nil, fmt.Errorf("instance %s: %s: %w", in.InstanceID, record.FieldPostKnowledge, err)
			}
			if post == nil {
				post = []record.CitingPaper{}
			}
		}
		row := InnoEvalRow{
			InstanceID: in.InstanceID, Split: splits[i], DatasetSplit: in.Split,
			KnowledgeCutoff: cmp.Or(in.KnowledgeCutoff, in.Target.Published),
			Idea:            idea, PreKnowledge: make([]KnowledgeSource, len(in.Sources)), PostKnowledge: post,
		}
		for j, s := range in.Sources {
			row.PreKnowledge[j] = KnowledgeSource{
				DocNumber: s.DocNumber, ArxivID: s.ArxivID, S2PaperID: s.S2PaperID, DOI: s.DOI,
				Version: s.Version, VersionDate: s.VersionDate, RevisedAfterCutoff: s.RevisedAfterCutoff,
				Title: s.Title, Year: s.Year, TextLevel: s.TextLevel, Card: s.Card,
			}
		}
		out = append(out, row)
	}
	return out, nil
}

// innoevalCard is the README of an innoeval export: the files, what each
// field holds, and how an InnoEval-style evaluator uses them.
func innoevalCard(d exportCardData) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# Groundwork export: %s\n\n", FormatInnoEval)
	b.WriteString("Idea-evaluation data in the layout of InnoEval (\"InnoEval: On Research Idea Evaluation as a Knowledge-Grounded, Multi-Perspective Reasoning Problem\"): one row per target paper of the dataset, its research idea as a six-tuple of claims, the timestamp that fixes the standpoint of evaluation, the knowledge before it and the knowledge after it.\n\n")
	b.WriteString("| file | split | rows |\n|---|---|---:|\n")
	for _, f := range d.Files {
		fmt.Fprintf(&b, "| `%s` | %s | %d |\n", f.Name, f.Split, f.Rows)
	}
	b.WriteString("\n")
	if n := len(d.LeftOut); n > 0 {
		fmt.Fprintf(&b, "Left out: %d %s whose idea has no verified claim in a required field (%s).\n\n", n, plural(n, "instance", "instances"), strings.Join(d.LeftOut, ", "))
	}
	if d.ValRows > 0 {
		fmt.Fprintf(&b, "The validation split holds %d of the dataset's train instances (the draw `curate sft` and every export make; `--val-size` sets how many). ", d.ValRows)
	}
	if slices.Contains(d.Splits, record.SplitTest) {
		b.WriteString("The test split holds the targets first published on or after the dataset's cutoff, and no test target is in the train or validation file: evaluate an evaluator on it; use the other files to build, calibrate or few-shot it.")
	}
	b.WriteString("\n\n## Fields\n\n")
	b.WriteString("- `instance_id` (string): the dataset's instance, the target's versionless arXiv ID; `split`: this file's split (train, " + holdout.SplitValidation + ", test); `dataset_split`: the dataset's.\n")
	b.WriteString("- `knowledge_cutoff` (string, YYYY-MM-DD): the idea's timestamp *t*, the target's arXiv v1 date: the standpoint of evaluation.\n")
	b.WriteString("- `idea`: the six-tuple, each field a list of `{claim, quote}`: `summary` (one TL;DR sentence), `motivations`, `research_questions`, `methods` (atomic method components, each with its `steps`, claims too), `experimental_settings`, `expected_results`. Every claim is atomic and self-contained (no figure, table, citation number or unexplained term of the paper's own) and its `quote` occurs verbatim in the target's text; claims that failed were dropped (the dataset's `idea` column counts them). `motivations`, `research_questions` and `methods` have at least one claim in every row; `summary`, `experimental_settings` and `expected_results` may be empty, as InnoEval allows for less mature ideas.\n")
	b.WriteString("- `pre_knowledge` (list): the target's sources, the papers it builds on, numbered as in the dataset's model input (`doc_number`): `arxiv_id`, `s2_paper_id`, `doi`, `version` and `version_date` (the version whose text was carded and its date, when the dataset was built with the versions known), `revised_after_cutoff` (the version read is dated after the cutoff), `title`, `year`, `text_level` (what the card was written from: full text, PDF, abstract) and `card` (its idea card: problem_gap, core_claim, method, inspiration, results, takeaways, opportunity, paradigm).\n")
	b.WriteString("- `post_knowledge` (list): the papers citing the target first published after *t*, the most influential first: `paper_id` (Semantic Scholar), `arxiv_id`, `title`, `abstract`, `date` and `date_from` (arXiv v1 or S2's date), `year`, `venue`, `influential` (S2: the citing paper builds on the target), `citation_count`, `influential_citation_count`. Empty when the store was built without `--post-knowledge N`, or when nothing has cited the target since.\n")
	b.WriteString("\n## How an evaluator uses them\n\n")
	b.WriteString("InnoEval grounds its judgement of an idea in the knowledge that existed at the idea's timestamp and draws its revision suggestions from what came after:\n\n")
	b.WriteString("- Evaluate `idea` as of `knowledge_cutoff`: give the evaluator the idea's components (the claims; the quotes are evidence, not input) and ground it in `pre_knowledge`, the literature the idea started from. A search an evaluator runs itself should be limited to documents dated on or before the cutoff (InnoEval's timestamped retrieval): the target's own paper and its reception are after the fact.\n")
	b.WriteString("- Knowledge grounding: each claim is one statement, so a grounding step can say which source cards support or contradict which claim of which component.\n")
	b.WriteString("- Revision suggestions and hindsight: `post_knowledge` is what the field did next with the idea: never show it to an evaluator judging as of the cutoff; compare its suggestions with it, or judge significance against it (the influential citations first).\n")
	b.WriteString("- The instance ID, the quotes and the sources' titles identify the target paper: an evaluator meant to judge blind should see the claims only.\n")
	loader := "parquet"
	if d.Encoding == EncodingJSONL {
		loader = "json"
	}
	b.WriteString("\n```python\nfrom datasets import load_dataset\nds = load_dataset(\"" + loader + "\", data_files={\"test\": \"EXPORT_DIR/" + fileFor(d.Files, record.SplitTest) + "\"})[\"test\"]\nrow = ds[0]\nidea = {k: [c[\"claim\"] for c in row[\"idea\"][k]] for k in [\"summary\", \"motivations\", \"research_questions\", \"methods\", \"experimental_settings\", \"expected_results\"]}\ncontext = [s[\"card\"] for s in row[\"pre_knowledge\"]]   # knowledge as of row[\"knowledge_cutoff\"]\nlater = [p[\"title\"] for p in row[\"post_knowledge\"]]     # for revision suggestions only\n```\n")
	return b.String()
}
