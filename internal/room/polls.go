// The class's answers at each predict step.

package room

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"

	"github.com/rmlab/lab/internal/plain"
	"github.com/rmlab/lab/internal/progress"
)

// Tally counts the room's answers at each predict step it has seen:
// lesson id → predict name → option → participants (Polls, as a map).
func (r *Room) Tally(ctx context.Context) (map[string]map[string]map[string]int, error) {
	polls, err := r.Polls(ctx)
	if err != nil {
		return nil, err
	}
	out := map[string]map[string]map[string]int{}
	for _, p := range polls {
		if out[p.Lesson] == nil {
			out[p.Lesson] = map[string]map[string]int{}
		}
		out[p.Lesson][p.Name] = p.Answers
	}
	return out, nil
}

// Poll is the class's answers at one predict step.
type Poll struct {
	Lesson   string         `json:"lesson"`
	Name     string         `json:"name"`
	Answers  map[string]int `json:"answers"`  // option → participants
	Answered int            `json:"answered"` // participants who answered
	Reached  int            `json:"reached"`  // participants who opened the lesson
}

// Polls are the room's answers at every predict step any participant
// answered, with how many of those who opened its lesson did.
func (r *Room) Polls(ctx context.Context) ([]Poll, error) {
	rows, err := r.DB.QueryContext(ctx, "SELECT name, lesson, progress FROM participant")
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	type key struct{ name, lesson, poll string }
	picks := map[key]string{}
	reached := map[string]map[string]bool{} // lesson → who reached it (it is open, or they have progress in it)
	reach := func(lesson, name string) {
		if reached[lesson] == nil {
			reached[lesson] = map[string]bool{}
		}
		reached[lesson][name] = true
	}
	for rows.Next() {
		var name, open, b string
		if err := rows.Scan(&name, &open, &b); err != nil {
			return nil, err
		}
		name = plain.Line(name, 32)
		if open != "" {
			reach(plain.Line(open, 128), name) // open now, saved or not
		}
		var f progress.File
		if json.Unmarshal([]byte(b), &f) != nil {
			continue
		}
		// Text from outside this process, as Participants' rows are.
		for id, l := range f.Lessons {
			if l == nil {
				continue
			}
			id = plain.Line(id, 128)
			reach(id, name)
			for poll, pick := range l.Predictions {
				picks[key{name, id, plain.Line(poll, 128)}] = plain.Line(pick, 256)
			}
		}
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	// The record holds every answer, those a reset forgot included: the
	// last answer of each participant at each poll counts.
	evs, err := r.DB.QueryContext(ctx, "SELECT name, lesson, step, detail FROM event WHERE kind='predict' ORDER BY id")
	if err != nil {
		return nil, fmt.Errorf("room %s: read its record: %w", r.Name, err)
	}
	defer evs.Close()
	for evs.Next() {
		var name, lesson, poll, pick string
		if err := evs.Scan(&name, &lesson, &poll, &pick); err != nil {
			return nil, err
		}
		name, lesson = plain.Line(name, 32), plain.Line(lesson, 128)
		picks[key{name, lesson, plain.Line(poll, 128)}] = plain.Line(pick, 256)
		reach(lesson, name)
	}
	if err := evs.Err(); err != nil {
		return nil, err
	}
	polls := map[[2]string]*Poll{}
	for k, pick := range picks {
		pk := [2]string{k.lesson, k.poll}
		if polls[pk] == nil {
			polls[pk] = &Poll{Lesson: k.lesson, Name: k.poll, Answers: map[string]int{}}
		}
		polls[pk].Answers[pick]++
		polls[pk].Answered++
	}
	var out []Poll
	for _, p := range polls {
		p.Reached = len(reached[p.Lesson])
		out = append(out, *p)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Lesson != out[j].Lesson {
			return out[i].Lesson < out[j].Lesson
		}
		return out[i].Name < out[j].Name
	})
	return out, nil
}
