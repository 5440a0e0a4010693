package dataset

import (
	"cmp"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/format"

	"github.com/groundwork/curate/internal/pipeline"
	"github.com/groundwork/curate/modelinput"
	"github.com/groundwork/curate/record"
)

// writeCard writes the dataset card: a YAML header that Hugging Face reads
// (configs with each split's files, features matching the Parquet schema,
// split sizes), then counts, provenance, the contamination summary and the
// model-input template.
func writeCard(w io.Writer, r *Result, a *cardAcc, tmpl *modelinput.Template, files map[string][]string) error {
	var b strings.Builder
	counts := a.counts
	n := map[string]int{record.SplitTrain: counts.Train, record.SplitTest: counts.Test}
	splits := []string{record.SplitTrain, record.SplitTest}
	mix := a.mix

	b.WriteString("---\n")
	b.WriteString("pretty_name: Groundwork document-grounded ideation\n")
	if id := mix.hfID(); id != "" {
		fmt.Fprintf(&b, "license: %s\n", id)
	} else {
		// Hugging Face's way to name a licence it has no identifier for:
		// license_link names the file that states it (the dataset card
		// spec: "LICENSE" or "LICENSE.md" in the repository, or a URL).
		fmt.Fprintf(&b, "license: other\nlicense_name: mixed-paper-licenses\nlicense_link: %s\n", LicenseFile)
	}
	fmt.Fprintf(&b, "size_categories:\n- %s\n", sizeCategory(counts.Train+counts.Test))
	b.WriteString("language:\n- en\n")
	b.WriteString("task_categories:\n- text-generation\n")
	b.WriteString("tags:\n- scientific-ideation\n- document-grounded\n- arxiv\n")
	b.WriteString("configs:\n- config_name: default\n  data_files:\n")
	for _, s := range splits {
		fmt.Fprintf(&b, "  - split: %s\n    path: %s/%s-*\n", s, DataDir, s)
	}
	b.WriteString("dataset_info:\n  features:\n")
	schema, err := instanceSchema(r.Options.Fields)
	if err != nil {
		return fmt.Errorf("dataset card: %w", err)
	}
	if err := hfFeatures(&b, schema.Fields(), "  "); err != nil {
		return fmt.Errorf("dataset card: %w", err)
	}
	b.WriteString("  splits:\n")
	for _, s := range splits {
		fmt.Fprintf(&b, "  - name: %s\n    num_examples: %d\n", s, n[s])
	}
	b.WriteString("---\n\n")

	o := r.Options
	c := r.Contamination
	if c == nil {
		c = &Contamination{Counts: countKinds(nil)}
	}
	fmt.Fprintf(&b, "# Groundwork document-grounded ideation dataset\n\n")
	fmt.Fprintf(&b, "Each row is one *target* paper: its numbered source papers, summarized as idea cards, are the model input (`prompt`, \"Document 1\" ... \"Document N\"); the target's own idea card is the held-out answer (`gold`), never part of the prompt. The test split holds targets whose arXiv v1 date is on or after **%s**; the train split those before.\n\n", o.TestFrom.Format(dateLayout))
	b.WriteString("## Counts\n\n| split | instances | files |\n|---|---:|---:|\n")
	for _, s := range splits {
		fmt.Fprintf(&b, "| %s | %d | %d |\n", s, n[s], len(files[s]))
	}
	fmt.Fprintf(&b, "\nTargets left out: %d (`%s`)", len(r.Dropped), DroppedFile)
	if reasons := countReasons(r.Dropped); len(reasons) > 0 {
		var parts []string
		for _, k := range slices.Sorted(maps.Keys(reasons)) {
			parts = append(parts, fmt.Sprintf("%s %d", k, reasons[k]))
		}
		fmt.Fprintf(&b, ": %s", strings.Join(parts, ", "))
	}
	b.WriteString(".\n\n")
	if t := textLevelText(a.textLevels); t != "" {
		b.WriteString(t)
	}
	if doms := byCount(a.testDomains); len(doms) > 0 {
		b.WriteString("Test domains: ")
		var parts []string
		for _, d := range doms {
			parts = append(parts, fmt.Sprintf("%s %d", d.label, d.n))
		}
		b.WriteString(strings.Join(parts, ", ") + ".\n\n")
	}
	fmt.Fprintf(&b, "Category filters: train %s; test %s.\n\n", filterText(o.TrainCategories), filterText(o.TestCategories))

	b.WriteString(guardsText(a.guards.withPublished(a.guarded)))
	b.WriteString(a.know.text(o.withDefaults().KnowledgeCut))
	b.WriteString("## Contamination\n\n")
	fmt.Fprintf(&b, "Policy `%s`. Before: train %d, test %d. Dropped: train %d, test %d. After: train %d, test %d. Violations found: %d (",
		c.Policy, c.Before.Train, c.Before.Test, c.Dropped.Train, c.Dropped.Test, c.After.Train, c.After.Test, len(c.Violations))
	var parts []string
	for _, k := range []string{KindTestTargetInTrain, KindTestTargetAsSource, KindDuplicate, KindGoldInPrompt, KindSplitDate} {
		parts = append(parts, fmt.Sprintf("%s %d", k, c.Counts[k]))
	}
	fmt.Fprintf(&b, "%s); each is listed in `%s` with its resolution. Rules:\n\n", strings.Join(parts, ", "), ContaminationFile)
	for _, rule := range Rules() {
		fmt.Fprintf(&b, "- %s\n", rule)
	}
	b.WriteString("\n`curate dataset --check DIR` re-verifies all of this from the files alone.\n\n")

	b.WriteString("## Provenance\n\n")
	prov := a.prov.summary()
	fmt.Fprintf(&b, "- pipeline version: %s\n- created at: %s\n", cmp.Or(prov.PipelineVersion, "(unknown)"), cmp.Or(prov.CreatedAt, "(no instances)"))
	fmt.Fprintf(&b, "- classify: model %s, prompt %s\n", cmp.Or(prov.Models.Classify, "-"), cmp.Or(prov.PromptVersions.Classify, "-"))
	fmt.Fprintf(&b, "- summarize: model %s, prompt %s\n", cmp.Or(prov.Models.Summarize, "-"), cmp.Or(prov.PromptVersions.Summarize, "-"))
	fmt.Fprintf(&b, "- model input: template `%s` (`%s`), K = %d ideas\n\n", tmpl.Version(), TemplateFile, o.NumIdeas)

	b.WriteString("## Licence\n\n")
	b.WriteString(mix.text())
	b.WriteString("\n")

	b.WriteString("## Use\n\n")
	b.WriteString("Hugging Face `datasets` (the YAML header names the splits' files):\n\n```python\n")
	b.WriteString("from datasets import load_dataset\nds = load_dataset(\"parquet\", data_files={\"train\": \"data/train-*.parquet\", \"test\": \"data/test-*.parquet\"})\n")
	b.WriteString("# or, from this directory or its Hub copy: load_dataset(\"DIR\")\nprint(ds[\"train\"][0][\"prompt\"][:500])\n```\n\n")
	b.WriteString("pandas:\n\n```python\nimport pandas as pd\ndf = pd.read_parquet(\"data/\")  # both splits; the split column tells them apart\ntrain = df[df.split == \"train\"]\n```\n\n")
	b.WriteString("DuckDB:\n\n```sql\nSELECT instance_id, split, target.title, target.domain, len(sources) AS n_sources, gold.opportunity\nFROM 'data/*.parquet' ORDER BY split, instance_id;\n```\n\n")
	b.WriteString("verl and TRL read trainer layouts that `curate export` writes from this directory, each with a README giving the trainer's config keys and the lengths its longest rows need (measured; `--tokenizer tokenizer.json` counts exactly), and, for RL, the reward (`reward.py`: the schema gate, the bonus and the set-level score) that the rows' `data_source` needs:\n\n")
	b.WriteString("```sh\ncurate export --format verl-rl  --out rl  .   # verl.trainer.main_ppo: custom_reward_function.path=rl/reward.py\n")
	b.WriteString("curate export --format verl-sft --out sft .   # verl.trainer.fsdp_sft_trainer: data.prompt_key=prompt data.response_key=response\n")
	b.WriteString("curate export --format messages --out chat .  # verl.trainer.sft_trainer: data.messages_key=messages\n")
	b.WriteString("curate export --format trl-sft  --out trl-sft .   # TRL SFTTrainer, prompt-completion (loss on the completion)\n")
	b.WriteString("curate export --format trl-grpo --out trl-grpo .  # TRL GRPOTrainer, prompt-only; reward_funcs=[reward.grpo_reward]\n```\n\n")
	b.WriteString("```python\n# TRL, after the trl-sft export (set max_length from its README: the default 1024 cuts the answer off)\n")
	b.WriteString("from datasets import load_dataset\nfrom trl import SFTConfig, SFTTrainer\n")
	b.WriteString("ds = load_dataset(\"parquet\", data_files={\"train\": \"trl-sft/train.parquet\"})[\"train\"]\n")
	b.WriteString("SFTTrainer(model=\"MODEL\", args=SFTConfig(max_length=LONGEST_ROW), train_dataset=ds).train()\n```\n\n")
	b.WriteString("Columns: `instance_id`, `split`, `target` (arxiv_id, title, published, primary_category, categories, domain, doi, s2_paper_id, num_references, version, version_date), `sources` (list of doc_number, ref_key, arxiv_id, s2_paper_id, doi, title, year, labels, rationale, quotes, text_level, card, version, version_date, revised_after_cutoff), `gold` (the idea card: problem_gap, core_claim, method, inspiration, opportunity, paradigm, ...), `knowledge_cutoff` (the target's v1 date, as of which its sources are read), `prompt`, `num_ideas`, `provenance`")
	for _, f := range r.Options.Fields {
		fmt.Fprintf(&b, ", `%s` (%s)", f.Name, f.About)
	}
	b.WriteString(".\n")
	b.WriteString(a.fieldText(r.Options.Fields))
	_, err = io.WriteString(w, b.String())
	return err
}

// cardAcc gathers what the dataset card says of the instances, one at a
// time.
type cardAcc struct {
	counts      SplitCounts
	mix         paperLicenses
	licenses    map[string]string
	testDomains map[string]int
	textLevels  map[string]int // source cards by text level
	// targetLicenses holds the recorded licences of the targets seen
	// (licenses.json).
	targetLicenses map[string]string
	prov           provAcc
	// guards are the Result's; guarded the instances they flagged.
	guards  *Guards
	guarded []string
	know    knowledgeCounts
	// fields sums, by field name, what each instance's value of a field
	// with Counts holds, in the order first seen.
	fields map[string][]pipeline.Count
	// fieldDecls are the fields stages add (Options.Fields).
	fieldDecls []*pipeline.Field
}

func newCardAcc(licenses map[string]string) *cardAcc {
	return &cardAcc{licenses: licenses, mix: paperLicenses{byLicense: map[string]int{}}, testDomains: map[string]int{}, textLevels: map[string]int{}, targetLicenses: map[string]string{}}
}

func (a *cardAcc) add(in *record.Instance) {
	if in.Split == record.SplitTest {
		a.counts.Test++
		a.testDomains[in.Target.Domain]++
	} else {
		a.counts.Train++
	}
	for _, src := range in.Sources {
		a.textLevels[src.TextLevel]++
	}
	a.know.add(in)
	if a.guards.flagged(in.Target.ArxivID) {
		a.guarded = append(a.guarded, in.Target.ArxivID)
	}
	a.mix.add(in, a.licenses)
	if l, ok := a.licenses[in.Target.ArxivID]; ok {
		a.targetLicenses[in.Target.ArxivID] = strings.TrimSpace(l)
	}
	a.prov.add(in.Provenance)
	a.addFields(in)
}

// addFields adds in's values of the fields with Counts (the rows were
// written from the same values, so a value that does not decode is not
// counted rather than failing the card).
func (a *cardAcc) addFields(in *record.Instance) {
	for _, f := range a.fieldDecls {
		if f.Counts == nil {
			continue
		}
		cs, err := f.Counts(in.Fields[f.Name])
		if err != nil {
			continue
		}
		if a.fields == nil {
			a.fields = map[string][]pipeline.Count{}
		}
		sum := a.fields[f.Name]
		for _, c := range cs {
			i := slices.IndexFunc(sum, func(x pipeline.Count) bool { return x.What == c.What })
			if i < 0 {
				sum = append(sum, pipeline.Count{What: c.What})
				i = len(sum) - 1
			}
			sum[i].N += c.N
		}
		a.fields[f.Name] = sum
	}
}

// fieldText is the card's account of the fields stages add, of those
// that count something: a line each with its sums over the instances.
func (a *cardAcc) fieldText(fields []*pipeline.Field) string {
	var b strings.Builder
	for _, f := range fields {
		if f.Counts == nil {
			continue
		}
		if b.Len() == 0 {
			b.WriteString("\nWhat the fields added by stages hold, over the instances:\n\n")
		}
		var parts []string
		for _, c := range a.fields[f.Name] {
			parts = append(parts, fmt.Sprintf("%d %s", c.N, c.What))
		}
		if len(parts) == 0 {
			parts = []string{"nothing counted (no instance)"}
		}
		fmt.Fprintf(&b, "- `%s`: %s\n", f.Name, strings.Join(parts, "; "))
	}
	return b.String()
}

// hfFeatures writes the Hugging Face `features:` list for Parquet fields:
// a leaf is `dtype:`, a LIST is `list:` (of a dtype or of fields), a group
// is `struct:`.
func hfFeatures(b *strings.Builder, fields []parquet.Field, indent string) error {
	for _, f := range fields {
		fmt.Fprintf(b, "%s- name: %s\n", indent, f.Name())
		if err := hfFeature(b, f, indent+"  "); err != nil {
			return fmt.Errorf("%s: %w", f.Name(), err)
		}
	}
	return nil
}

func hfFeature(b *strings.Builder, n parquet.Node, indent string) error {
	if lt := n.Type().LogicalType(); lt != nil {
		if _, ok := lt.Value.(*format.ListType); ok && !n.Leaf() {
			// LIST -> repeated group list -> element
			elem := n.Fields()[0].Fields()[0]
			if elem.Leaf() {
				d, err := hfDtype(elem)
				if err != nil {
					return err
				}
				fmt.Fprintf(b, "%slist: %s\n", indent, d)
				return nil
			}
			fmt.Fprintf(b, "%slist:\n", indent)
			return hfFeatures(b, elem.Fields(), indent)
		}
	}
	if n.Leaf() {
		d, err := hfDtype(n)
		if err != nil {
			return err
		}
		fmt.Fprintf(b, "%sdtype: %s\n", indent, d)
		return nil
	}
	fmt.Fprintf(b, "%sstruct:\n", indent)
	return hfFeatures(b, n.Fields(), indent)
}

func hfDtype(n parquet.Node) (string, error) {
	switch n.Type().Kind() {
	case parquet.ByteArray:
		return "string", nil
	case parquet.Int64:
		return "int64", nil
	case parquet.Int32:
		return "int32", nil
	case parquet.Boolean:
		return "bool", nil
	case parquet.Double:
		return "float64", nil
	case parquet.Float:
		return "float32", nil
	}
	return "", fmt.Errorf("no Hugging Face dtype for %v", n.Type())
}

// textLevelText says what the source cards were written from, with the
// share of each text level ("" without sources).
func textLevelText(levels map[string]int) string {
	total := 0
	for _, n := range levels {
		total += n
	}
	if total == 0 {
		return ""
	}
	names := map[string]string{record.TextFull: "the arXiv HTML full text", record.TextPDF: "the open-access PDF's full text (GROBID)", record.TextAbstract: "the abstract alone"}
	var parts []string
	for _, c := range counts(levels, levelOrder(levels), total) {
		name := names[c.Label]
		if name == "" {
			name = "`" + c.Label + "`"
		}
		parts = append(parts, fmt.Sprintf("%s %d (%.1f%%)", name, c.N, 100*c.Share))
	}
	return "Source cards written from (`sources.text_level`): " + strings.Join(parts, ", ") + ".\n\n"
}

func countReasons(ds []Dropped) map[string]int {
	m := map[string]int{}
	for _, d := range ds {
		m[d.Reason]++
	}
	return m
}

func filterText(f []string) string {
	if len(f) == 0 {
		return "all categories"
	}
	return strings.Join(f, ", ")
}

// provAcc gathers the distinct provenance values of instances.
type provAcc struct {
	pv, ca, cm, cp, sm, sp, dp map[string]bool
}

func (a *provAcc) add(p record.Provenance) {
	if a.pv == nil {
		a.pv, a.ca, a.cm, a.cp, a.sm, a.sp, a.dp = map[string]bool{}, map[string]bool{}, map[string]bool{}, map[string]bool{}, map[string]bool{}, map[string]bool{}, map[string]bool{}
	}
	set := func(m map[string]bool, vs ...string) {
		for _, v := range vs {
			m[v] = true
		}
	}
	set(a.pv, p.PipelineVersion)
	set(a.ca, p.CreatedAt)
	set(a.cm, splitSet(p.Models.Classify)...)
	set(a.cp, splitSet(p.PromptVersions.Classify)...)
	set(a.sm, splitSet(p.Models.Summarize)...)
	set(a.sp, splitSet(p.PromptVersions.Summarize)...)
	set(a.dp, p.PromptVersions.Dataset)
}

func (a *provAcc) summary() record.Provenance {
	j := func(m map[string]bool) string { return joinSet(slices.Collect(maps.Keys(m))) }
	return record.Provenance{
		PipelineVersion: j(a.pv),
		CreatedAt:       j(a.ca),
		Models:          record.StageValues{Classify: j(a.cm), Summarize: j(a.sm)},
		PromptVersions:  record.StageValues{Classify: j(a.cp), Summarize: j(a.sp), Dataset: j(a.dp)},
	}
}

func splitSet(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(s, ", ")
}

// sizeCategory is the Hugging Face size category of n rows.
func sizeCategory(n int) string {
	switch {
	case n < 1_000:
		return "n<1K"
	case n < 10_000:
		return "1K<n<10K"
	case n < 100_000:
		return "10K<n<100K"
	case n < 1_000_000:
		return "100K<n<1M"
	}
	return "1M<n<10M"
}

// hfLicenses maps the licence URLs arXiv records (its metadata's
// <license>) to Hugging Face licence identifiers.
var hfLicenses = map[string]string{
	"creativecommons.org/licenses/by/4.0":         "cc-by-4.0",
	"creativecommons.org/licenses/by-sa/4.0":      "cc-by-sa-4.0",
	"creativecommons.org/licenses/by-nc/4.0":      "cc-by-nc-4.0",
	"creativecommons.org/licenses/by-nc-sa/4.0":   "cc-by-nc-sa-4.0",
	"creativecommons.org/licenses/by-nc-nd/4.0":   "cc-by-nc-nd-4.0",
	"creativecommons.org/licenses/by-nd/4.0":      "cc-by-nd-4.0",
	"creativecommons.org/licenses/by/3.0":         "cc-by-3.0",
	"creativecommons.org/licenses/by-nc-sa/3.0":   "cc-by-nc-sa-3.0",
	"creativecommons.org/publicdomain/zero/1.0":   "cc0-1.0",
	"arxiv.org/licenses/nonexclusive-distrib/1.0": "",
	"arxiv.org/licenses/assumed-1991-2003":        "",
}

// licenseKey folds a licence URL for lookup: no scheme, no "www.", no
// trailing slash.
func licenseKey(u string) string {
	u = strings.TrimSpace(strings.ToLower(u))
	for _, p := range []string{"https://", "http://", "www."} {
		u = strings.TrimPrefix(u, p)
	}
	return strings.TrimSuffix(u, "/")
}

// paperLicenses is the licence mix of the target papers.
type paperLicenses struct {
	byLicense map[string]int // licence URL -> targets
	none      int            // targets whose arXiv metadata names no licence
	unknown   int            // targets whose licence is not recorded
	total     int
}

// add counts one target's licence (licenses maps a versionless arXiv ID
// to the licence URL its arXiv metadata gives, "" when it names none; an
// ID not in it is not recorded).
func (m *paperLicenses) add(in *record.Instance, licenses map[string]string) {
	m.total++
	l, ok := licenses[in.Target.ArxivID]
	switch l = strings.TrimSpace(l); {
	case !ok:
		m.unknown++
	case l == "":
		m.none++
	default:
		m.byLicense[l]++
	}
}

// recorded reports whether any target's licence is recorded.
func (m paperLicenses) recorded() bool { return m.unknown < m.total }

// hfID is the one Hugging Face licence of every target, or "" when the
// targets' licences differ, are unknown or have no identifier.
func (m paperLicenses) hfID() string {
	if m.unknown > 0 || m.none > 0 || len(m.byLicense) != 1 {
		return ""
	}
	for l := range m.byLicense {
		return hfLicenses[licenseKey(l)]
	}
	return ""
}

// licenseText is LICENSE.md: the licence section of the card, on its own.
func licenseText(m paperLicenses) string {
	return "# Licences of the Groundwork ideation dataset\n\n" + m.text()
}

func (m paperLicenses) text() string {
	var b strings.Builder
	b.WriteString("Every row is derived from papers under their own licences: the target's quotes and metadata, and idea cards summarizing the target and its sources. ")
	b.WriteString("arXiv's default licence (non-exclusive distribution) lets arXiv distribute a paper but grants nobody else the right to redistribute its text, and sources may come from any publisher: **the paper text in this dataset (the `quotes`, and cards close to their papers) may not be redistributable**; check the licences before you publish the dataset or a model's verbatim outputs.\n\n")
	if !m.recorded() {
		fmt.Fprintf(&b, "The licence of the %d target papers is not recorded. curate reads it from arXiv's OAI-PMH metadata: a refresh records the licences of the papers it harvests, and `curate licenses` looks up the others.\n", m.total)
		return b.String()
	}
	b.WriteString("Target papers by licence (from their arXiv OAI-PMH metadata; each target's in `" + LicensesFile + "`):\n\n| licence | targets |\n|---|---:|\n")
	for _, l := range slices.Sorted(maps.Keys(m.byLicense)) {
		fmt.Fprintf(&b, "| %s | %d |\n", l, m.byLicense[l])
	}
	if m.none > 0 {
		fmt.Fprintf(&b, "| (none named in the arXiv metadata) | %d |\n", m.none)
	}
	if m.unknown > 0 {
		fmt.Fprintf(&b, "| (not recorded) | %d |\n", m.unknown)
	}
	return b.String()
}
