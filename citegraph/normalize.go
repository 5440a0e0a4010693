package citegraph

import "strings"

// titleMatch reports whether two normalized titles name the same paper:
// equal, one a prefix of the other (a truncated title of at least five
// words), or nearly equal word sequences (a typo, a dropped word).
func titleMatch(a, b string) bool {
	if a == "" || b == "" {
		return false
	}
	if a == b {
		return true
	}
	short, long := a, b
	if len(short) > len(long) {
		short, long = long, short
	}
	if strings.Count(short, " ") >= 4 && strings.HasPrefix(long, short) {
		return true
	}
	return similarity(a, b) >= 0.9
}

// similarity is 1 - the word-level edit distance over the longer length.
func similarity(a, b string) float64 {
	wa, wb := strings.Fields(a), strings.Fields(b)
	if len(wa) == 0 || len(wb) == 0 {
		return 0
	}
	if len(wa) > len(wb) {
		wa, wb = wb, wa
	}
	if float64(len(wa))/float64(len(wb)) < 0.8 {
		return 0
	}
	prev := make([]int, len(wb)+1)
	cur := make([]int, len(wb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(wa); i++ {
		cur[0] = i
		for j := 1; j <= len(wb); j++ {
			cost := 1
			if wa[i-1] == wb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return 1 - float64(prev[len(wb)])/float64(len(wb))
}

// containsTitle reports whether a normalized bibliography entry contains a
// normalized title of at least three words, on word boundaries.
func containsTitle(entry, title string) bool {
	if strings.Count(title, " ") < 2 {
		return false
	}
	i := strings.Index(" "+entry+" ", " "+title+" ")
	return i >= 0
}
