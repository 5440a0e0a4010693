package dataset

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"github.com/groundwork/curate/internal/trainerconf"
	"github.com/groundwork/curate/modelinput"
	"github.com/groundwork/curate/reward"
)

// columnPaths lists the JSON names of a row type's columns and of their
// fields, dotted (reward_model.ground_truth): what a README may name that
// is no setting.
func columnPaths(t reflect.Type, prefix string) []string {
	var out []string
	for i := range t.NumField() {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "" || name == "-" {
			continue
		}
		out = append(out, prefix+name)
		ft := f.Type
		for ft.Kind() == reflect.Slice || ft.Kind() == reflect.Pointer {
			ft = ft.Elem()
		}
		if ft.Kind() == reflect.Struct {
			out = append(out, columnPaths(ft, prefix+name+".")...)
		}
	}
	return out
}

var rowTypes = map[string]reflect.Type{
	FormatVerlRL: reflect.TypeFor[VerlRLRow](), FormatVerlSFT: reflect.TypeFor[VerlSFTRow](), FormatMessages: reflect.TypeFor[MessagesRow](),
	FormatTRLSFT: reflect.TypeFor[TRLSFTRow](), FormatTRLGRPO: reflect.TypeFor[TRLGRPORow](),
}

// TestExportConfigsAtTrainerCommits: every trainer setting an export's
// README prints (the commands' overrides and keyword arguments, the keys
// its notes name) is one the trainer takes at the commit the README
// names, as recorded in internal/trainerconf/testdata, and every reward
// function it names is in the shipped reward.py. So is every setting the
// dataset card prints.
func TestExportConfigsAtTrainerCommits(t *testing.T) {
	schemas, err := trainerconf.Load(filepath.Join("..", "internal", "trainerconf", "testdata"))
	if err != nil {
		t.Fatal(err)
	}
	r := mustBuild(t, corpus(), fixedOptions())
	fn := regexp.MustCompile(`custom_reward_function\.name=([A-Za-z_]+)`)
	src := string(reward.Source())
	for _, format := range ExportFormats() {
		t.Run(format, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "x")
			if _, err := WriteExport(context.Background(), out, r.Instances, ExportDirOptions{Format: format}); err != nil {
				t.Fatal(err)
			}
			card, err := os.ReadFile(filepath.Join(out, ReadmeFile))
			if err != nil {
				t.Fatal(err)
			}
			problems, checked := schemas.Check(string(card), trainerconf.Options{Columns: columnPaths(rowTypes[format], "")})
			for _, p := range problems {
				t.Errorf("%s README, %v", format, p)
			}
			if len(checked) < 4 {
				t.Errorf("%s README: only %v checked\n%s", format, checked, card)
			}
			t.Logf("checked %v", checked)
			for _, m := range fn.FindAllStringSubmatch(string(card), -1) {
				if !regexp.MustCompile(`(?m)^(def ` + m[1] + `\(|[A-Za-z_, ]*\b` + m[1] + `\b[A-Za-z_, ]*= make_)`).MatchString(src) {
					t.Errorf("%s README names the reward function %s, which %s does not define", format, m[1], reward.ExportName)
				}
			}
		})
	}
	var card strings.Builder
	res := &Result{Options: fixedOptions()}
	tmpl, err := modelinput.Load()
	if err != nil {
		t.Fatal(err)
	}
	if err := writeCard(&card, res, newCardAcc(nil), tmpl, nil); err != nil {
		t.Fatal(err)
	}
	var cols []string
	for _, typ := range rowTypes {
		cols = append(cols, columnPaths(typ, "")...)
	}
	problems, checked := schemas.Check(card.String(), trainerconf.Options{Columns: cols})
	for _, p := range problems {
		t.Errorf("dataset card, %v", p)
	}
	if len(checked) < 5 {
		t.Errorf("dataset card: only %v checked", checked)
	}
	t.Logf("dataset card: checked %v", checked)
}
