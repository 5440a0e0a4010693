package dataset

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/groundwork/curate/record"
)

func TestConsolidateDrops(t *testing.T) {
	noGold := makeTarget("2401.00010", "2024-01-01", "cs.CL", 4)
	noGold.Gold = nil
	emptyGold := makeTarget("2401.00011", "2024-01-01", "cs.CL", 4)
	emptyGold.Gold.CoreClaim = " "
	noDate := makeTarget("2401.00012", "", "cs.CL", 4)
	badID := makeTarget("not-an-id", "2024-01-01", "cs.CL", 4)
	// Three selected, but one has no card: two usable sources.
	missingCard := makeTargetWith("2401.00013", "2024-01-01", "cs.CL", []srcSpec{
		{key: "a", arxiv: "1901.00001", title: "First source paper of this one"},
		{key: "b", arxiv: "1901.00002", title: "Second source paper of this one"},
		{key: "c", arxiv: "1901.00003", title: "Third source paper of this one", noCard: true},
	})
	// A source that is the target itself (an earlier version).
	selfCite := makeTargetWith("2401.00014", "2024-01-01", "cs.CL", []srcSpec{
		{key: "a", arxiv: "1901.00001", title: "First source paper of this one"},
		{key: "b", arxiv: "1901.00002", title: "Second source paper of this one"},
		{key: "c", arxiv: "2401.00014v1", title: "The target itself again"},
	})

	tests := []struct {
		name   string
		in     TargetInputs
		reason string
		detail string
	}{
		{"no gold card", noGold, DropNoGold, "no gold card"},
		{"empty gold field", emptyGold, DropNoGold, "core_claim"},
		{"exactly two sources", makeTarget("2401.00020", "2024-01-01", "cs.CL", 2), DropFewSources, "2 sources"},
		{"one source", makeTarget("2401.00021", "2024-01-01", "cs.CL", 1), DropFewSources, "1 sources"},
		{"no date", noDate, DropNoDate, "YYYY-MM-DD"},
		{"not an arXiv ID", badID, DropInvalidID, "not-an-id"},
		{"a source without a card", missingCard, DropFewSources, "1 without a card"},
		{"a source that is the target", selfCite, DropFewSources, "1 the target itself"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ins, dropped, err := Consolidate([]TargetInputs{tt.in}, fixedOptions())
			if err != nil {
				t.Fatal(err)
			}
			if len(ins) != 0 || len(dropped) != 1 {
				t.Fatalf("got %d instances, %d dropped; want 0, 1", len(ins), len(dropped))
			}
			d := dropped[0]
			if d.Reason != tt.reason || !strings.Contains(d.Detail, tt.detail) {
				t.Errorf("dropped %+v, want reason %s with %q", d, tt.reason, tt.detail)
			}
		})
	}
}

func TestConsolidateKeepsThreeSources(t *testing.T) {
	ins, dropped, err := Consolidate([]TargetInputs{makeTarget("2401.00030v2", "2024-01-01", "cs.CL", 3)}, fixedOptions())
	if err != nil {
		t.Fatal(err)
	}
	if len(ins) != 1 || len(dropped) != 0 {
		t.Fatalf("got %d instances, %d dropped (%v); want 1, 0", len(ins), len(dropped), dropped)
	}
	in := ins[0]
	if in.InstanceID != "2401.00030" {
		t.Errorf("instance ID %q, want the versionless arXiv ID", in.InstanceID)
	}
	if in.Target.Domain != "Language" || in.Split != record.SplitTrain || in.NumIdeas != DefaultNumIdeas {
		t.Errorf("target %+v split %s K %d", in.Target, in.Split, in.NumIdeas)
	}
	if in.Target.NumReferences != 4 {
		t.Errorf("num_references %d, want 4 (3 sources + 1 other)", in.Target.NumReferences)
	}
	p := in.Provenance
	if p.CreatedAt != "2026-08-01T12:00:00Z" || p.PipelineVersion != "test" || p.Models.Classify != "classifier" ||
		p.PromptVersions.Summarize != "gold-v1, source-v1" || p.PromptVersions.Dataset != "model-input-v2" {
		t.Errorf("provenance %+v", p)
	}
	for i, s := range in.Sources {
		if s.DocNumber != i+1 || s.TextLevel != record.TextFull || len(s.Labels) == 0 || s.Card.Results == "" {
			t.Errorf("source %d: %+v", i, s)
		}
		if !strings.Contains(in.Prompt, "Document "+strconv.Itoa(i+1)+": "+s.Title) {
			t.Errorf("prompt lacks Document %d: %s", i+1, s.Title)
		}
	}
	for f, v := range in.Gold.IdeaFields() {
		if strings.Contains(in.Prompt, *v) {
			t.Errorf("gold %s is in the prompt", f.Name)
		}
	}
	if !strings.Contains(in.Prompt, "exactly 3 objects") || !strings.Contains(in.Prompt, "[Bridge Opportunity]") {
		t.Errorf("prompt lacks the instruction:\n%s", in.Prompt)
	}
}

func TestSourceNumbering(t *testing.T) {
	specs := []srcSpec{
		{key: "bib.a", arxiv: "1901.00001", title: "Alpha paper on some topic"},
		{key: "bib.b", arxiv: "1901.00002", title: "Beta paper on some topic"},
		{key: "bib.c", arxiv: "1901.00003", title: "Gamma paper on some topic"},
		{key: "bib.d", arxiv: "1901.00004", title: "Delta paper on some topic"},
		{key: "bib.dup", arxiv: "1901.00002v3", title: "Beta paper again, another entry"},
	}
	tests := []struct {
		name    string
		mention []string
		want    []string
	}{
		{"bibliography order without mentions", nil, []string{"bib.a", "bib.b", "bib.c", "bib.d"}},
		{"first mention first, then bibliography", []string{"bib.c", "bib.a", "bib.c"}, []string{"bib.c", "bib.a", "bib.b", "bib.d"}},
		{"a duplicate mentioned first wins", []string{"bib.dup"}, []string{"bib.dup", "bib.a", "bib.c", "bib.d"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := makeTargetWith("2401.00040", "2024-01-01", "cs.CL", specs)
			in.MentionOrder = tt.mention
			// Reversed selections and cards must not change the order.
			for i, j := 0, len(in.Selections)-1; i < j; i, j = i+1, j-1 {
				in.Selections[i], in.Selections[j] = in.Selections[j], in.Selections[i]
			}
			for run := range 2 {
				ins, _, err := Consolidate([]TargetInputs{in}, fixedOptions())
				if err != nil || len(ins) != 1 {
					t.Fatalf("run %d: %d instances, %v", run, len(ins), err)
				}
				var got []string
				for _, s := range ins[0].Sources {
					got = append(got, s.RefKey)
				}
				if strings.Join(got, " ") != strings.Join(tt.want, " ") {
					t.Errorf("run %d: order %v, want %v", run, got, tt.want)
				}
			}
		})
	}
}

func TestSplitBoundary(t *testing.T) {
	tests := []struct {
		published, testFrom, want string
	}{
		{"2025-12-31", "", record.SplitTrain},
		{"2026-01-01", "", record.SplitTest},
		{"2026-01-02", "", record.SplitTest},
		{"2025-06-30", "2025-07-01", record.SplitTrain},
		{"2025-07-01", "2025-07-01", record.SplitTest},
	}
	for _, tt := range tests {
		opts := fixedOptions()
		if tt.testFrom != "" {
			opts.TestFrom, _ = time.Parse(dateLayout, tt.testFrom)
		}
		ins, _, err := Consolidate([]TargetInputs{makeTarget("2401.00050", tt.published, "cs.CL", 3)}, opts)
		if err != nil || len(ins) != 1 {
			t.Fatalf("%s: %d instances, %v", tt.published, len(ins), err)
		}
		if ins[0].Split != tt.want {
			t.Errorf("published %s, test from %q: split %s, want %s", tt.published, tt.testFrom, ins[0].Split, tt.want)
		}
	}
}

func TestCategoryFilters(t *testing.T) {
	targets := []TargetInputs{
		makeTarget("2401.00061", "2024-01-01", "cs.CL", 3),
		makeTarget("2401.00062", "2024-01-01", "cs.LG", 3),
		makeTarget("2601.00063", "2026-02-01", "cs.LG", 3),
		makeTarget("2601.00064", "2026-02-01", "hep-th", 3),
		makeTarget("2601.00065", "2026-02-01", "q-bio.NC", 3),
	}
	tests := []struct {
		name        string
		train, test []string
		kept        []string
	}{
		{"no filter", nil, nil, []string{"2401.00061", "2401.00062", "2601.00063", "2601.00064", "2601.00065"}},
		{"train cs.CL only", []string{"cs.CL"}, nil, []string{"2401.00061", "2601.00063", "2601.00064", "2601.00065"}},
		{"test archives", nil, []string{"cs.*", "q-bio"}, []string{"2401.00061", "2401.00062", "2601.00063", "2601.00065"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			opts := fixedOptions()
			opts.TrainCategories, opts.TestCategories = tt.train, tt.test
			ins, dropped, err := Consolidate(targets, opts)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, in := range ins {
				got = append(got, in.InstanceID)
			}
			if strings.Join(got, " ") != strings.Join(tt.kept, " ") {
				t.Errorf("kept %v, want %v", got, tt.kept)
			}
			for _, d := range dropped {
				if d.Reason != DropCategory {
					t.Errorf("dropped %+v", d)
				}
			}
		})
	}
}

func TestDomain(t *testing.T) {
	for cat, want := range map[string]string{
		"cs.CL": "Language", "cs.LG": "Machine Learning", "stat.ML": "Machine Learning", "cs.DL": "Computer Science",
		"physics.optics": "Physics", "hep-th": "Physics", "astro-ph.GA": "Astronomy", "q-bio.NC": "Biology",
		"q-fin.ST": "Economics", "econ.EM": "Economics", "math.AG": "Mathematics", "stat.ME": "Statistics",
		"": DomainUnknown, "zz.XX": "Other",
	} {
		if got := Domain(cat); got != want {
			t.Errorf("Domain(%q) = %q, want %q", cat, got, want)
		}
	}
}
