package steps

import "strings"

// Suggest is " (did you mean NAME?)" for the known name nearest to word, or
// "" when none is near: a typo's message names what was meant.
func Suggest(word string, known []string) string {
	best, bestD := "", len(word)/3+1 // a third of the word may be wrong, at least one letter
	if bestD > 3 {
		bestD = 3
	}
	for _, k := range known {
		d := distance(strings.ToLower(word), strings.ToLower(k))
		if len(word) >= 4 && (strings.HasPrefix(k, word) || strings.HasPrefix(word, k)) {
			d = min(d, 1) // a name cut short or run on: blog_idempotency, sql2
		}
		if d <= bestD && k != word {
			best, bestD = k, d
		}
	}
	if best == "" {
		return ""
	}
	return " (did you mean " + best + "?)"
}

// distance is the Damerau–Levenshtein distance (a swap of two neighbours
// is one edit: expcet → expect).
func distance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	d := make([][]int, len(ra)+1)
	for i := range d {
		d[i] = make([]int, len(rb)+1)
		d[i][0] = i
	}
	for j := range d[0] {
		d[0][j] = j
	}
	for i := 1; i <= len(ra); i++ {
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && ra[i-1] == rb[j-2] && ra[i-2] == rb[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(ra)][len(rb)]
}
