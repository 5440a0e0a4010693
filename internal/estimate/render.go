package estimate

import (
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"
)

// WriteTable writes the estimate for a person: one table of services, one
// of stages, and the totals.
func (e Estimate) WriteTable(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "service\trequests\tper target\tinterval\tfrom\tin flight\ttime")
	for _, s := range e.Services {
		per := "-"
		if e.Targets > 0 {
			per = strconv.FormatFloat(s.PerTarget, 'g', 3, 64)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", s.Name, count(int64(s.Requests)), per,
			dur(s.Interval), dash(s.IntervalSource), capText(s.MaxInFlight), dur(s.Wall))
	}
	fmt.Fprintln(tw)
	fmt.Fprintln(tw, "stage\trequests\tmodel\tcalls\tinput tokens\toutput tokens\tsync $\tbatch $\ttime")
	for _, st := range e.Stages {
		var reqs []string
		for _, name := range sortedKeys(st.Requests) {
			reqs = append(reqs, name+" "+count(int64(st.Requests[name])))
		}
		t := dur(st.Wall)
		if st.WallUpTo {
			t = "up to " + t + " (batch)"
		}
		calls, sync, batch := "-", "-", "-"
		if st.Calls > 0 {
			calls, sync, batch = count(int64(st.Calls)), dollars(st.SyncCost), dollars(st.BatchCost)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", st.Stage, dash(strings.Join(reqs, ", ")), dash(st.Model),
			calls, tokens(st.Input), tokens(st.Output), sync, batch, t)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	line := fmt.Sprintf("\nwall time: %s", dur(e.Wall))
	if e.Bottleneck != "" {
		line += " (set by " + e.Bottleneck + "; stages overlap)"
	}
	if e.Serial > e.Wall {
		line += fmt.Sprintf(", at most %s if the stages ran one after another", dur(e.Serial))
	}
	line += "\nllm cost: " + dollars(e.Cost) + " (batch prices for batch stages, sync for the others)\n"
	for _, n := range e.Notes {
		line += "note: " + n + "\n"
	}
	_, err := io.WriteString(w, line)
	return err
}

func sortedKeys(m map[string]int) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func capText(n int) string {
	if n == 0 {
		return "any"
	}
	return strconv.Itoa(n)
}

// count writes n with thousands separators: 50,000.
func count(n int64) string {
	s := strconv.FormatInt(n, 10)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

// tokens writes a token count briefly: 950, 45.2k, 12.3M.
func tokens(n int64) string {
	switch {
	case n == 0:
		return "-"
	case n < 10_000:
		return count(n)
	case n < 1_000_000:
		return strconv.FormatFloat(float64(n)/1e3, 'f', 1, 64) + "k"
	}
	return strconv.FormatFloat(float64(n)/1e6, 'f', 1, 64) + "M"
}

func dollars(c *float64) string {
	if c == nil {
		return "unknown"
	}
	if *c < 1000 {
		return fmt.Sprintf("$%.2f", *c)
	}
	return "$" + count(int64(*c+0.5))
}

// dur writes a duration as a person plans with it: 45s, 12m30s, 5h20m,
// 8d16h.
func dur(d time.Duration) string {
	switch {
	case d == 0:
		return "0"
	case d < time.Second:
		return d.Round(time.Millisecond).String()
	case d < time.Hour:
		return d.Round(time.Second).String()
	case d < 48*time.Hour:
		d = d.Round(time.Minute)
		return fmt.Sprintf("%dh%02dm", int(d.Hours()), int(d.Minutes())%60)
	}
	d = d.Round(time.Hour)
	return fmt.Sprintf("%dd%02dh", int(d.Hours())/24, int(d.Hours())%24)
}

// seconds is a duration in JSON: seconds, and the text dur writes.
type seconds time.Duration

func (s seconds) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		Seconds float64 `json:"seconds"`
		Text    string  `json:"text"`
	}{time.Duration(s).Seconds(), dur(time.Duration(s))})
}

// MarshalJSON writes durations as {"seconds": ..., "text": ...}.
func (s ServiceEstimate) MarshalJSON() ([]byte, error) {
	type plain ServiceEstimate
	return json.Marshal(struct {
		plain
		Interval seconds `json:"interval"`
		Spacing  seconds `json:"spacing"`
		Wall     seconds `json:"wall"`
	}{plain(s), seconds(s.Interval), seconds(s.Spacing), seconds(s.Wall)})
}

// MarshalJSON writes durations as {"seconds": ..., "text": ...}.
func (s StageEstimate) MarshalJSON() ([]byte, error) {
	type plain StageEstimate
	return json.Marshal(struct {
		plain
		Wall seconds `json:"wall"`
	}{plain(s), seconds(s.Wall)})
}

// MarshalJSON writes durations as {"seconds": ..., "text": ...}.
func (e Estimate) MarshalJSON() ([]byte, error) {
	type plain Estimate
	return json.Marshal(struct {
		plain
		Wall   seconds `json:"wall"`
		Serial seconds `json:"serial_wall"`
	}{plain(e), seconds(e.Wall), seconds(e.Serial)})
}
