package latexml

import (
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"
)

// A reference entry's title is found by where it stands, not by what it
// says: after the author list (and the year of author-year styles) and
// before the venue, which is what is followed by volume and page numbers,
// set in italics before a bold volume, or written as a journal
// abbreviation. An entry with nothing between its authors and its venue
// (the journal-volume-page styles of astronomy and physics) has no title,
// and a journal name is never taken for one.

// refBlock is one \newblock of an entry: its text and the byte ranges in
// it set in italics and bold.
type refBlock struct {
	text         string
	italic, bold [][2]int
}

// entryText joins an entry's blocks into one text with the style ranges
// moved along.
func entryText(blocks []refBlock) refBlock {
	var e refBlock
	for _, b := range blocks {
		if e.text != "" {
			e.text += " "
		}
		off := len(e.text)
		e.text += b.text
		for _, r := range b.italic {
			e.italic = append(e.italic, [2]int{r[0] + off, r[1] + off})
		}
		for _, r := range b.bold {
			e.bold = append(e.bold, [2]int{r[0] + off, r[1] + off})
		}
	}
	return e
}

// refTitle returns the title of an entry made of blocks, or "".
func refTitle(blocks []refBlock) string {
	if len(blocks) == 0 {
		return ""
	}
	if len(blocks) >= 2 {
		// \newblock styles put the authors, the title and the venue in
		// blocks of their own.
		b := strings.TrimSpace(blocks[1].text)
		if q := quotedTitle(b, true); q != "" {
			return cleanTitle(q)
		}
		if r, ok := styleRunAt(blocks[1].italic, blocks[1].text, 0); ok && isField(blocks[1].text, r) && italicVenue(blocks[1], r) {
			return "" // "\newblock {\em Journal}, 12:1–10, 2000."
		}
		if first := firstPieceText(b); looksLikeTitle(b) && !venueLike(first) && !nonTitle(first) {
			return cleanTitle(cutTitle(b, true))
		}
	}
	e := entryText(blocks)
	ps := splitPieces(e.text)
	i, periodStyle := authorsEnd(e.text, ps)
	for i < len(ps) && isYearPiece(e.text[ps[i].start:ps[i].end]) {
		i++
	}
	if i >= len(ps) {
		return ""
	}
	at := ps[i].start
	// A quote or an italic run right after the authors is the title,
	// unless the italic run is the venue.
	if q := quotedTitle(e.text[at:], true); q != "" {
		return cleanTitle(q)
	}
	if r, ok := styleRunAt(e.italic, e.text, at); ok && isField(e.text, r) {
		run := e.text[r[0]:r[1]]
		if italicVenue(e, r) || venueLike(run) {
			return ""
		}
		if looksLikeTitle(run) {
			return cleanTitle(cutTitle(run, true))
		}
	}
	// The title ends where an italic venue begins.
	limit := len(e.text)
	seen := 0
	for _, r := range e.italic {
		if r[0] <= at {
			continue
		}
		if seen++; seen > 64 {
			break // a title is near the start; bound the work on odd entries
		}
		if italicVenue(e, r) && isField(e.text, r) {
			limit = r[0]
			break
		}
	}
	return piecesTitle(e.text, ps[i:], limit, periodStyle)
}

// piecesTitle reads the title from the pieces after the authors: the
// first piece, with the pieces that continue it, unless it is a venue or
// a note.
func piecesTitle(text string, ps []piece, limit int, periodStyle bool) string {
	first := text[ps[0].start:min(ps[0].end, limit)]
	if first == "" || nonTitle(first) || venueLike(first) || !looksLikeTitle(first) {
		return ""
	}
	if journalHead(text, ps) {
		return ""
	}
	end := min(ps[0].end, limit)
	j := 0
	for j+1 < len(ps) && ps[j+1].start < limit {
		next := text[ps[j+1].start:min(ps[j+1].end, limit)]
		if reVolumeTitle.MatchString(next) || reRomanPart.MatchString(next) {
			// "... Vol. 1: Basic results", "On random graphs. I"
			j++
			end = min(ps[j].end, limit)
			continue
		}
		if ps[j].sep != ',' && !(ps[j].sep == ';' && startsLower(next)) || nonTitle(next) || venueLike(next) || markedNote(next) {
			break
		}
		// In a period style the title runs to the end of its sentence; in
		// a comma style (authors, title, journal) only a piece that goes
		// on in lower case, or a range of years, continues it.
		if !periodStyle && !startsLower(next) && !strings.HasPrefix(next, "and ") && !reYearRange.MatchString(next) {
			break
		}
		j++
		end = min(ps[j].end, limit)
	}
	title := text[ps[0].start:end]
	// The only text before the numbers is a journal, not a title:
	// "Annual review of physical chemistry 55, 427 (2004)", "Comments on
	// Astrophysics and Space Physics, 2, 66".
	if j+1 < len(ps) && ps[j].sep != '.' {
		if next := text[ps[j+1].start:ps[j+1].end]; isVolumePiece(next) && !strings.HasPrefix(strings.ToLower(next), "vol") {
			return ""
		}
	}
	if m := reTrailingNumber.FindStringIndex(title); m != nil && j+1 < len(ps) {
		if stem := title[:m[0]]; venueLike(stem) || isVolumePiece(text[ps[j+1].start:ps[j+1].end]) {
			return ""
		}
	}
	return cleanTitle(cutTitle(cutAtJournal(title), false))
}

// journalHead reports whether the first piece is one abbreviated word
// that opens a journal's name, the rest split off at its full stop and
// followed by numbers: "Astrophys. Space Sci., 320, 55".
func journalHead(text string, ps []piece) bool {
	first := text[ps[0].start:ps[0].end]
	if ps[0].sep != '.' || strings.ContainsAny(first, " \n") || !abbreviationLike(first+".") || len(ps) < 3 {
		return false
	}
	rest := text[ps[1].start:ps[1].end]
	if ps[1].sep == '.' {
		rest += "."
	}
	return venueLike(first+". "+rest) && isVolumePiece(text[ps[2].start:ps[2].end])
}

// cutAtJournal cuts a title that runs on into a journal abbreviation and
// its numbers, as styles without punctuation write them ("Entanglement
// entropy of free fermions J. Phys. A: Math. Theor. 48 1").
func cutAtJournal(t string) string {
	words := strings.Fields(t)
	if len(words) < 4 || !startsDigit(words[len(words)-1]) {
		return t
	}
	for i := 1; i+1 < len(words); i++ {
		if abbreviationLike(words[i]) && abbreviationLike(strings.TrimRight(words[i+1], ":,")) && !abbreviationLike(words[i-1]) {
			if k := strings.Index(t, words[i]+" "+words[i+1]); k > 0 {
				return strings.TrimSpace(t[:k])
			}
		}
	}
	return t
}

var (
	reYearRange      = regexp.MustCompile(`^(?:1[6-9]|20)\d\d\s*[-–—]\s*(?:(?:1[6-9]|20)\d\d|\d\d)$`)
	reTrailingNumber = regexp.MustCompile(`\s+[A-Z]?\d+[A-Za-z]?$`)
	reYearPiece      = regexp.MustCompile(`^[(\[]?(?:1[6-9]|20)\d\d[a-z]?[)\]]?\.?$`)
	reNumericField   = regexp.MustCompile(`^(?:[(\[]?[A-Za-z]{0,2}\d+[\w.:()/–—,-]*|[ivxlc]+|[A-Z]|:|[-–—])$`)
	// "Vol. 1: Basic results" goes on with the title of a work in volumes.
	reVolumeTitle = regexp.MustCompile(`^Vol\. ?[\dIVX]+: \pL`)
	// "third ed.", "2nd edition", "revised edition".
	reEdition = regexp.MustCompile(`^(?:\d+(?:st|nd|rd|th)|first|second|third|fourth|fifth|sixth|seventh|eighth|revised|new|expanded|enlarged)\s+(?:ed\.?|edn\.?|edition)(?:\s|$)`)
	// "I", "II", "IV": the part of a work in parts.
	reRomanPart = regexp.MustCompile(`^[IVX]{1,4}$`)
)

// piece is a stretch of an entry's text between two separators: commas,
// semicolons and the full stops that end a sentence (not those of initials
// or of a journal abbreviation such as "Annu. Rev. Phys. Chem.").
// Quotes and parentheses are never split.
type piece struct {
	start, end int
	sep        byte // ',', '.', ';' or 0 at the end
}

func splitPieces(text string) []piece {
	var ps []piece
	start := 0
	depth, quote := 0, 0
	add := func(end, next int, sep byte) {
		s, e := start, end
		for s < e && (text[s] == ' ' || text[s] == '\n') {
			s++
		}
		for e > s && (text[e-1] == ' ' || text[e-1] == '\n') {
			e--
		}
		if e > s {
			ps = append(ps, piece{start: s, end: e, sep: sep})
		} else if len(ps) > 0 && sep == '.' {
			ps[len(ps)-1].sep = '.'
		}
		start = next
	}
	for i := 0; i < len(text); {
		r, size := utf8.DecodeRuneInString(text[i:])
		switch {
		case r == '(' || r == '[':
			depth++
		case (r == ')' || r == ']') && depth > 0:
			depth--
		case r == '“':
			quote++
		case r == '”' && quote > 0:
			quote--
		case depth > 0 || quote > 0:
		case r == ',' || r == ';':
			if r == ',' && i > 0 && i+1 < len(text) && isDigit(text[i-1]) && isDigit(text[i+1]) {
				break // 1,234
			}
			add(i, i+1, byte(r))
		case r == '.' || r == '?' || r == '!':
			if i+1 < len(text) && text[i+1] != ' ' && text[i+1] != '\n' {
				break // "3.5", "arXiv.org", "Fireworks.ai"
			}
			if r == '.' && !sentenceStop(text, i) {
				break
			}
			if r == '.' {
				add(i, i+1, '.')
			} else {
				// "…know what they know? arXiv preprint": the piece keeps
				// its mark.
				add(i+1, i+1, '.')
			}
		}
		i += size
	}
	add(len(text), len(text), 0)
	return ps
}

// sentenceStop reports whether the full stop at i ends a piece: not after
// an initial or an abbreviation, and not inside a chain of journal
// abbreviations ("Phys. Rev. Lett. 12").
func sentenceStop(text string, i int) bool {
	if !periodEnds(text[:i]) {
		return false
	}
	word := lastWord(text[:i])
	if k := strings.LastIndexByte(word, ','); k >= 0 && isInitial(word[k+1:]+".") {
		return false // "Lasserre,J. B."
	}
	if strings.ContainsAny(word, ".-‐") && isInitial(word+".") {
		return false // "Z.-h. Yang", "J.-P. Serre"
	}
	next := nextWord(text[i+1:])
	if next == "" {
		return true
	}
	// A chain of abbreviations is a journal's name: it starts a piece or
	// goes on from another abbreviation ("Annu. Rev. Phys. Chem. 63",
	// not "... of the Cell. 4th ed.").
	if abbreviationLike(word+".") && (abbreviationLike(next) || startsDigit(next) && !isYearPiece(next) && !reOrdinal.MatchString(next)) {
		before := strings.TrimRight(text[:i-len(word)], " \n")
		if before == "" || strings.HasSuffix(before, ",") || strings.HasSuffix(before, ";") || strings.HasSuffix(before, ":") ||
			abbreviationLike(lastWord(before)) {
			return false
		}
	}
	return true
}

func lastWord(s string) string {
	i := strings.LastIndexAny(s, " \n(")
	return s[i+1:]
}

func nextWord(s string) string {
	s = strings.TrimLeft(s, " \n")
	if i := strings.IndexAny(s, " \n,"); i >= 0 {
		return s[:i]
	}
	return s
}

// abbreviationLike reports whether w is an abbreviated word as journal
// names write them: capitalised, short, ending with a full stop ("Phys.",
// "J.", "Astrophys.", "Annu.").
func abbreviationLike(w string) bool {
	if !strings.HasSuffix(w, ".") || len(w) < 2 {
		return false
	}
	core := strings.TrimSuffix(w, ".")
	r, _ := utf8.DecodeRuneInString(core)
	if !unicode.IsUpper(r) || utf8.RuneCountInString(core) > 10 {
		return false
	}
	for _, c := range core {
		if !unicode.IsLetter(c) && c != '-' && c != '&' {
			return false
		}
	}
	return true
}

func startsDigit(s string) bool { return s != "" && isDigit(s[0]) }

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

func isYearPiece(s string) bool { return reYearPiece.MatchString(strings.TrimSpace(s)) }

// isVolumePiece reports whether s is a volume, issue or page number (not a
// year standing alone): "407", "12(3):1–10", "A188", "pp. 5–9", "vol. 2".
func isVolumePiece(s string) bool {
	s = strings.TrimSpace(s)
	low := strings.ToLower(s)
	for _, p := range []string{"pp.", "p.", "vol.", "vol ", "no.", "pages "} {
		if strings.HasPrefix(low, p) {
			return true
		}
	}
	if isYearPiece(s) {
		return false
	}
	f := strings.Fields(s)
	digits := false
	for _, w := range f {
		if !reNumericField.MatchString(w) {
			return false
		}
		digits = digits || strings.ContainsAny(w, "0123456789")
	}
	return digits
}

// authorsEnd returns the index of the first piece after the author list,
// and whether the list ended with a full stop (a period style: "Authors.
// Title. Venue.") rather than a comma ("Authors, Title, Journal").
func authorsEnd(text string, ps []piece) (int, bool) {
	initials := false // the list writes initials ("A. Smith", "Smith, A.")
	surname := false  // the piece before was a surname alone ("Newman, M. E. ...")
	for i := 0; i < len(ps); i++ {
		t := text[ps[i].start:ps[i].end]
		if isYearPiece(t) {
			return i, false
		}
		if groupBeforeYear(t) {
			// "The pandas development team 2020, pandas-dev/pandas: ...".
			return i + 1, false
		}
		if isHandle(t) {
			// "Ginsburg A., bsipocz, keflavich, 2019, ...": the GitHub
			// handles a software record lists among its authors, up to
			// the year.
			j := i
			for j < len(ps) && isHandle(text[ps[j].start:ps[j].end]) {
				j++
			}
			if j < len(ps) && isYearPiece(text[ps[j].start:ps[j].end]) {
				return j, false
			}
		}
		k, kind := namePrefix(t, isYearPiece(nextPieceText(text, ps, i)), surname)
		if kind == nameNone && i == 0 && ps[0].sep == '.' && len(ps) > 1 && groupName(t) {
			// "Intergovernmental Panel on Climate Change. Climate Change
			// 2021: ...": a body as the author.
			return 1, true
		}
		switch kind {
		case nameNone:
			return i, false
		case nameThenMore:
			// "M. E. Assortative mixing in networks": split the piece
			// where the names end.
			ps[i].start += k
			for ps[i].start < ps[i].end && text[ps[i].start] == ' ' {
				ps[i].start++
			}
			return i, true
		case nameThenYear:
			// "C. G. 1996", "et al. (2001) Initial sequencing ...": the
			// title, if any, follows the year; the separator after the
			// year tells the style ("(2019). Title", "1996, ApJ").
			y := ps[i].start + k
			for y < ps[i].end && text[y] != ' ' && text[y] != ':' {
				y++
			}
			for y < ps[i].end && strings.IndexByte(" :.)", text[y]) >= 0 {
				y++
			}
			if y >= ps[i].end {
				return i + 1, ps[i].sep == '.'
			}
			ps[i].start = y
			return i, true
		}
		hasInitial := strings.ContainsAny(t, ".") && containsInitial(t)
		if initials && !hasInitial && !strings.Contains(t, "et al") && !startsWithInitial(nextPieceText(text, ps, i)) {
			// After names with initials, words without any are a title
			// ("A. Author, Spin, charge, and orbital order, ...").
			return i, false
		}
		initials = initials || hasInitial
		surname = !hasInitial && len(strings.Fields(t)) <= 3
		if ps[i].sep == '.' {
			return i + 1, true
		}
		if kind == nameAll && endsWithGroup(t) && i+2 < len(ps) && !startsWithInitial(text[ps[i+2].start:ps[i+2].end]) {
			// "LIGO Scientific Collaboration, Advanced LIGO, Class. ...": a
			// body's name ends the authors, unless people follow it
			// ("Astropy Collaboration, Robitaille, T. P., ...").
			return i + 1, false
		}
	}
	return len(ps), false
}

// isHandle reports whether piece t is a user name of a code host (a GitHub
// handle: "bsipocz", "k-mensah", "adrn"): one word of lower-case letters,
// digits, hyphens and underscores, with a letter.
func isHandle(t string) bool {
	if len(t) < 2 || len(t) > 39 || particles[t] || t == "and" || t == "et" || t == "al" {
		return false
	}
	letter := false
	for i := 0; i < len(t); i++ {
		c := t[i]
		switch {
		case c >= 'a' && c <= 'z':
			letter = true
		case isDigit(c) || (c == '-' || c == '_') && i > 0:
		default:
			return false
		}
	}
	return letter
}

func nextPieceText(text string, ps []piece, i int) string {
	if i+1 < len(ps) {
		return text[ps[i+1].start:ps[i+1].end]
	}
	return ""
}

type nameKind int

const (
	nameNone     nameKind = iota
	nameAll               // the whole piece is names
	nameThenMore          // names, then a title
	nameThenYear          // names, then the year
)

// namePrefix reports how much of piece t is a list of person or group
// names: k bytes of it, and whether something else follows.
func namePrefix(t string, beforeYear, afterSurname bool) (int, nameKind) {
	words := strings.Fields(t)
	if len(words) == 0 {
		return 0, nameNone
	}
	// Groups write long names: "The LSST Dark Energy Science
	// Collaboration et al., 2018".
	maxCaps := 4
	if beforeYear || strings.Contains(t, "et al") {
		maxCaps = 12
	}
	pos := 0     // bytes of t consumed by name words
	caps := 0    // capitalised words in a row without an initial
	initEnd := 0 // end of the last initial with its full stop, or "et al."
	names := 0
	named := afterSurname // a surname came before the initials
	// stop ends the names at the last initial when a title follows them
	// in the same piece, if the initials follow a surname ("Jones K.
	// Effect of aspirin", "Newman, M. E. Assortative mixing") or end with
	// "et al." ("Silver, D. et al. Mastering the game"), not when they
	// open a name ("R. Delgado (private communication)").
	etAl := false
	stop := func() (int, nameKind) {
		if initEnd > 0 && (named || etAl) {
			return initEnd, nameThenMore
		}
		return 0, nameNone
	}
	for wi, w := range words {
		idx := strings.Index(t[pos:], w) + pos
		end := idx + len(w)
		bare := strings.Trim(w, ",;:()")
		if reYearPiece.MatchString(bare) && names > 0 {
			// "DePree, C. G. 1996", "Smith (2020)", "Hansen, L. P. (1982):":
			// the year ends the names.
			return idx, nameThenYear
		}
		if strings.HasSuffix(w, ":") {
			// "Vapnik, V.: The Nature of ...": a colon after an initial
			// ends the names; after a word it is the title's
			// ("Probability Theorey: A comprehensive course").
			if strings.HasSuffix(bare, ".") && (isInitial(bare) || strings.HasPrefix(bare, "al.")) {
				return end, nameThenMore
			}
			return stop()
		}
		switch {
		case isInitial(bare) && !strings.Contains(bare, ".") && wi+1 < len(words) && startsLower(words[wi+1]) &&
			words[wi+1] != "and" && words[wi+1] != "et":
			// "A mean field game ...": an article, not an initial.
			return stop()
		case isInitial(bare):
			caps = 0
			names++
			if strings.HasSuffix(bare, ".") {
				initEnd = end
			}
			etAl = false
		case bare == "et" && wi+1 < len(words) && strings.HasPrefix(words[wi+1], "al"):
			caps = 0
		case strings.HasPrefix(bare, "al.") || bare == "al":
			names++
			initEnd = end
			etAl = true
		case bare == "and" || bare == "&" || particles[strings.ToLower(bare)] || bare == "editors" || bare == "eds." || bare == "(eds.)" || bare == "ed." || bare == "Jr." || bare == "Jr":
		case nameWord(bare):
			named = true
			caps++
			if caps > maxCaps {
				return stop()
			}
			names++
		default:
			return stop()
		}
		pos = end
	}
	if names == 0 {
		return 0, nameNone
	}
	return len(t), nameAll
}

// groupWords end the names of bodies that sign as authors.
var groupWords = map[string]bool{
	"collaboration": true, "consortium": true, "team": true, "group": true, "committee": true,
	"organization": true, "organisation": true, "association": true, "society": true, "institute": true,
	"project": true, "foundation": true, "council": true, "agency": true, "authors": true,
	"developers": true, "contributors": true, "community": true,
}

// groupBeforeYear reports whether piece t is a body's name followed by
// the year: "The pandas development team 2020", "Astropy Collaboration
// 2018".
func groupBeforeYear(t string) bool {
	f := strings.Fields(t)
	return len(f) >= 3 && isYearPiece(f[len(f)-1]) && groupWords[strings.ToLower(strings.Trim(f[len(f)-2], ".,;"))]
}

func endsWithGroup(t string) bool {
	f := strings.Fields(t)
	return len(f) >= 2 && groupWords[strings.ToLower(strings.Trim(f[len(f)-1], ".,;"))]
}

func startsWithInitial(t string) bool {
	f := strings.Fields(t)
	return len(f) > 0 && isInitial(strings.Trim(f[0], ",;:")) && strings.Contains(f[0], ".")
}

// isInitialName reports whether words are a person's name starting with
// an initial ("J. Smith") rather than an abbreviated journal.
func isInitialName(words []string) bool {
	return len(words) == 2 && isInitial(words[0]) && nameWord(words[1]) && !strings.HasSuffix(words[1], ".")
}

var reInitial = regexp.MustCompile(`^\p{Lu}\p{Ll}{0,2}\.?(?:[-‐]\p{L}\p{Ll}?\.|\p{Lu}\p{Ll}?\.)*$`)

// isInitial reports whether w is an initial or a run of them: "J.", "Yu.",
// "J.-P.", "I.I.", "O.Yu.", "X" (a lone capital).
func isInitial(w string) bool {
	if w == "" {
		return false
	}
	if !strings.Contains(w, ".") {
		return utf8.RuneCountInString(w) == 1 && unicode.IsUpper([]rune(w)[0])
	}
	return reInitial.MatchString(w)
}

func containsInitial(t string) bool {
	for _, w := range strings.Fields(t) {
		if isInitial(strings.Trim(w, ",;()")) {
			return true
		}
	}
	return false
}

// nameWord reports whether w can be (part of) a name: capitalised, or a
// group name such as "AI@Meta" or "DeepSeek-AI", with no digits.
func nameWord(w string) bool {
	r, _ := utf8.DecodeRuneInString(w)
	if !unicode.IsUpper(r) {
		return false
	}
	for _, c := range w {
		if unicode.IsDigit(c) || c == ':' || c == '?' {
			return false
		}
	}
	return true
}

// groupName reports whether t reads as the name of a body: capitalised
// words joined by small ones ("Intergovernmental Panel on Climate
// Change", "World Health Organization"), no colon and no digits.
func groupName(t string) bool {
	words := strings.Fields(t)
	if len(words) < 2 || len(words) > 10 || strings.ContainsAny(t, ":0123456789?") {
		return false
	}
	caps := 0
	for _, w := range words {
		switch w {
		case "of", "on", "for", "the", "and", "in", "de", "du", "des", "la", "le", "&", "&amp;":
			continue
		}
		if !nameWord(w) {
			return false
		}
		caps++
	}
	return caps >= 2
}

// firstPieceText returns the text of s up to its first separator.
func firstPieceText(s string) string {
	ps := splitPieces(s)
	if len(ps) == 0 {
		return ""
	}
	return s[ps[0].start:ps[0].end]
}

// styleRunAt returns the style range that starts at offset at (after any
// spaces, brackets or quotes).
func styleRunAt(runs [][2]int, text string, at int) ([2]int, bool) {
	for _, r := range runs {
		if r[0] >= at && strings.TrimLeft(text[at:r[0]], " (“\"") == "" {
			return trimRun(text, r), true
		}
		if r[0] < at && r[1] > at+2 && strings.TrimSpace(text[r[0]:at]) == "" {
			return trimRun(text, [2]int{at, r[1]}), true
		}
	}
	return [2]int{}, false
}

func trimRun(text string, r [2]int) [2]int {
	for r[0] < r[1] && text[r[0]] == ' ' {
		r[0]++
	}
	for r[1] > r[0] && text[r[1]-1] == ' ' {
		r[1]--
	}
	return r
}

// isField reports whether a style run is a field of its own, not a word
// emphasised inside one: it ends at a separator or the end of the entry.
func isField(text string, r [2]int) bool {
	rest := strings.TrimLeft(text[r[1]:], " ")
	if rest == "" {
		return true
	}
	if strings.ContainsRune(".,;:)”(", rune(rest[0])) || startsDigit(rest) {
		return true
	}
	inner := strings.TrimRight(text[r[0]:r[1]], " ")
	return strings.HasSuffix(inner, ".") || strings.HasSuffix(inner, ",")
}

// italicVenue reports whether italic run r is a venue: followed by a bold
// volume or by volume and page numbers.
func italicVenue(e refBlock, r [2]int) bool {
	rest := strings.TrimLeft(e.text[r[1]:], " ,")
	for _, b := range e.bold {
		if b[0] >= r[1] && strings.TrimLeft(e.text[r[1]:b[0]], " ,") == "" {
			return true
		}
	}
	f := strings.Fields(rest)
	return len(f) > 0 && isVolumePiece(strings.TrimRight(f[0], ",")) && !isYearPiece(strings.TrimRight(f[0], ",.")) &&
		!reOrdinal.MatchString(f[0])
}

var reOrdinal = regexp.MustCompile(`^\(?\d+(?:st|nd|rd|th)\b`)

// cutTitle cuts what follows a title inside the same field: ". In: ...",
// ", Masters thesis", ". Ed. by ...", ", volume 342 of ...".
func cutTitle(s string, block bool) string {
	ps := splitPieces(s)
	if len(ps) < 2 {
		return s
	}
	end := ps[0].end
	for j := 1; j < len(ps); j++ {
		t := s[ps[j].start:ps[j].end]
		if reVolumeTitle.MatchString(t) || reYearRange.MatchString(t) || reRomanPart.MatchString(t) {
			end = ps[j].end
			continue
		}
		if nonTitle(t) || markedNote(t) || block && venueLike(t) {
			break
		}
		if ps[j-1].sep == '.' && !block {
			break
		}
		end = ps[j].end
	}
	return s[:end]
}

// nonTitle reports whether a piece is a note about the work, not its
// title: a venue marker, a number, an identifier, a thesis or report.
func nonTitle(s string) bool {
	s = strings.TrimSpace(s)
	if s == "" || isYearPiece(s) || isVolumePiece(s) {
		return true
	}
	low := strings.ToLower(s)
	for _, p := range nonTitlePrefixes {
		if strings.HasPrefix(low, p) && wordEnds(low, len(p)) {
			// A lower-case "in" before a capital names a venue ("in
			// Advances in ...", "in Calibrating Hubble ..."); before
			// anything else it may go on with a sentence-case title
			// ("..., guinea, in 2014: an observational study").
			if p == "in " && s[0] == 'i' {
				r, _ := utf8.DecodeRuneInString(s[3:])
				return unicode.IsUpper(r)
			}
			if p == "in " && inTitle(s) {
				return false
			}
			return true
		}
	}
	if strings.Contains(low, "private communication") || strings.Contains(low, "personal communication") ||
		strings.Contains(low, "in preparation") {
		return true
	}
	return reURL.MatchString(s) && strings.Count(s, " ") < 2
}

// inTitle reports whether s, which opens with "In ", is a title that
// begins with the word ("In search of lost time", "In defense of ..."),
// not the "In" before a venue ("In Proceedings of", "In ICML", "In J.
// Smith (ed.)"): a venue's next word is capitalised.
func inTitle(s string) bool {
	if !strings.HasPrefix(s, "In ") {
		return false
	}
	r, _ := utf8.DecodeRuneInString(strings.TrimLeft(s[3:], " "))
	return unicode.IsLower(r)
}

// wordEnds reports whether a prefix of length n of s ends a word.
func wordEnds(s string, n int) bool {
	if n == 0 || n >= len(s) {
		return true
	}
	last, next := rune(s[n-1]), rune(s[n])
	return !unicode.IsLetter(last) || !unicode.IsLetter(next)
}

var nonTitlePrefixes = []string{
	"in ", "in:", "arxiv", "corr", "preprint", "url", "http", "www.", "doi", "isbn", "issn", "available at",
	"available from", "available online", "accessed", "retrieved", "technical report", "tech. rep", "tech rep",
	"phd", "ph.d", "ph. d", "master thesis", "masters thesis", "master's thesis", "master’s thesis", "msc thesis",
	"thesis", "dissertation", "submitted", "in press", "to appear", "accepted", "forthcoming", "under review",
	"manuscript", "unpublished", "private communication", "personal communication", "working paper",
	"discussion paper", "lecture notes in", "chapter", "pp.", "pages", "vol.", "volume", "no.", "ed.", "eds.",
	"edited by", "editor", "editors", "(eds", "report", "white paper", "github", "[online]", "online:",
	"note:", "ser.", "springer", "wiley", "elsevier", "cambridge university press", "oxford university press",
	"mit press", "university press", "publisher", "part of", "e-print", "eprint", "e-prints",
	"in preparation", "in prep.", "ibid", "see", "for a review", "for reviews", "for details", "for a recent",
	"for an overview", "cf.", "supplemental material", "supplementary material", "we thank", "note that",
}

// markedNote reports whether a piece after a title says what kind of work
// it is (a report, a thesis) rather than continuing the title.
func markedNote(s string) bool {
	low := strings.ToLower(s)
	if strings.HasPrefix(low, "version ") || len(low) > 1 && low[0] == 'v' && isDigit(low[1]) {
		return true // "..., version 0.19", "..., v2"
	}
	if reEdition.MatchString(low) {
		return true // "..., third ed.", "2nd edition"
	}
	for _, w := range []string{"technical report", "tech. rep", "thesis", "dissertation", "working paper",
		"proceedings", "conference", "workshop", "symposium", "journal", "arxiv", "preprint", "university press",
		"publishing", "publishers", "lecture notes"} {
		if strings.Contains(low, w) {
			return true
		}
	}
	return false
}

// venueLike reports whether a piece names a journal, proceedings or
// other venue: a known abbreviation or acronym, a chain of abbreviated
// words, or a journal's name.
func venueLike(s string) bool {
	s = strings.TrimSpace(strings.TrimRight(s, ".,;"))
	if s == "" {
		return false
	}
	stem := strings.TrimSpace(reTrailingNumber.ReplaceAllString(s, ""))
	if venueAcronyms[stem] || venueAcronyms[strings.TrimSuffix(stem, ".")] {
		return true
	}
	words := strings.Fields(stem)
	if f := strings.Fields(s); len(f) > 0 && len(f) <= 5 && abbreviationLike(f[0]) && !isInitialName(f) {
		return true // "J. Cosmology Astropart. Phys", "Nat. Commun."
	}
	abbr, lower := 0, 0
	for _, w := range words {
		switch {
		case abbreviationLike(w):
			abbr++
		case w != "" && unicode.IsLower([]rune(w)[0]) && !particles[w] && len(w) > 3:
			lower++
		}
	}
	if abbr >= 2 && lower <= 1 || abbr >= 1 && len(words) <= 2 && len(words) > 0 && abbreviationLike(words[0]) {
		return true
	}
	low := strings.ToLower(stem)
	if len(words) >= 2 && words[0] == "Nature" && natureJournals[strings.ToLower(words[1])] {
		return true
	}
	for _, p := range venuePrefixes {
		if strings.HasPrefix(low, p) {
			return true
		}
	}
	// "American Economic Review", "Physics Reports"; not "Deep
	// Learning: A Review".
	if !strings.Contains(stem, ": ") && !strings.HasSuffix(low, " a review") {
		for _, w := range venueEnds {
			if strings.HasSuffix(low, w) && titleCased(words) {
				return true
			}
		}
	}
	return false
}

// titleCased reports whether every word of a name but its small words is
// capitalised, as journal names are written.
func titleCased(words []string) bool {
	for _, w := range words {
		switch strings.ToLower(w) {
		case "of", "the", "and", "in", "on", "for", "&", "de", "der", "und", "et", "a":
			continue
		}
		if r, _ := utf8.DecodeRuneInString(w); !unicode.IsUpper(r) {
			return false
		}
	}
	return true
}

var venuePrefixes = []string{
	"journal of", "j. of", "proceedings", "proc.", "proc ", "transactions on", "trans.", "annals of", "annual review",
	"annu. rev", "bulletin of", "letters in", "letters on", "advances in neural", "monthly notices", "physical review",
	"reviews of modern", "review of", "the review of", "the journal", "the annals", "international conference",
	"international journal", "conference on", "workshop on", "symposium on", "ieee ", "acm ", "siam ", "the astrophysical",
	"astronomy and astrophysics", "astronomy & astrophysics", "science advances", "plos ", "frontiers in",
	"communications in", "communications of", "reports on", "philosophical transactions", "european journal",
	"american journal", "the american", "the economic journal", "quarterly journal", "the quarterly",
}

var venueEnds = []string{
	"journal", "review", "reviews", "letters", "transactions", "proceedings", "quarterly", "magazine", "bulletin",
	"notices", "annals", "reports", "communications",
}

// natureJournals are the words after "Nature" in the names of its
// journals ("Nature Physics", "Nature communications").
var natureJournals = map[string]bool{
	"communications": true, "physics": true, "materials": true, "methods": true, "genetics": true, "medicine": true,
	"biotechnology": true, "neuroscience": true, "chemistry": true, "astronomy": true, "climate": true, "energy": true,
	"photonics": true, "nanotechnology": true, "reviews": true, "machine": true, "human": true, "ecology": true,
	"structural": true, "cell": true, "immunology": true, "microbiology": true, "plants": true, "catalysis": true,
	"electronics": true, "geoscience": true, "sustainability": true, "phys.": true, "commun.": true, "mater.": true,
	"methods.": true, "genet.": true, "med.": true, "biotechnol.": true, "neurosci.": true, "chem.": true,
	"astron.": true, "photon.": true, "nanotechnol.": true, "rev.": true, "mach.": true,
}

var venueAcronyms = map[string]bool{
	"ApJ": true, "ApJS": true, "ApJL": true, "ApJ Lett": true, "MNRAS": true, "A&A": true, "AJ": true, "PASP": true,
	"PASJ": true, "PASA": true, "ARA&A": true, "JCAP": true, "PRL": true, "PRD": true, "PRB": true, "PRE": true,
	"PRX": true, "Nature": true, "Science": true, "Cell": true, "Lancet": true, "The Lancet": true, "PNAS": true,
	"Icarus": true, "Galaxies": true, "Universe": true, "Econometrica": true, "Biometrika": true, "Bernoulli": true,
	"Genetics": true, "Bioinformatics": true, "Biostatistics": true, "Epidemics": true, "NIPS": true,
	"NeurIPS": true, "ICML": true, "ICLR": true, "CVPR": true, "ICCV": true, "ECCV": true, "ACL": true,
	"EMNLP": true, "NAACL": true, "AAAI": true, "IJCAI": true, "KDD": true, "SIGIR": true, "WWW": true,
	"AISTATS": true, "UAI": true, "COLT": true, "ICASSP": true, "Interspeech": true, "INTERSPEECH": true,
	"COLING": true, "EACL": true, "TACL": true, "JMLR": true, "TPAMI": true, "SIGGRAPH": true, "CHI": true,
	"ICRA": true, "IROS": true, "RSS": true, "CoRL": true, "JHEP": true, "EPJC": true, "PLoS ONE": true,
	"PLOS ONE": true, "PloS one": true, "eLife": true, "BMJ": true, "JAMA": true, "NEJM": true, "RISK": true,
	"A&AS": true, "A&AR": true, "AN": true, "MmSAI": true, "SSRv": true, "Ap&SS": true, "PhRvD": true, "PhRvL": true,
	"NatAs": true, "AJS": true, "RMxAA": true, "BAAS": true, "JQSRT": true, "NewA": true, "ARep": true,
}
