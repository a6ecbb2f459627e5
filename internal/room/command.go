package room

import (
	"fmt"
	"slices"
	"strings"
	"time"
)

// Grammar is the instructor's command line, the same on the room screen
// (`:` then a line) and for lab room.
const Grammar = "goto N [NAME] | say [NAME] TEXT | end NAME | reset NAME | timer 10m|off | watch NAME | present N"

// Parse reads one command line. names are the room's participants: "say
// alice well done" speaks to alice alone, "say five minutes left" to
// everyone. A timer's end is fixed here, so every server shows the same.
func Parse(line string, names []string) (Command, error) {
	f := strings.Fields(line)
	if len(f) == 0 {
		return Command{}, fmt.Errorf("an empty command; %s", Grammar)
	}
	rest := strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(line), f[0]))
	switch f[0] {
	case Goto:
		if len(f) != 2 && len(f) != 3 {
			return Command{}, fmt.Errorf("write goto N [NAME]")
		}
		c := Command{Kind: Goto, Arg: f[1]}
		if len(f) == 3 {
			c.Target = f[2]
		}
		return c, nil
	case Say:
		if len(f) < 2 {
			return Command{}, fmt.Errorf("write say TEXT, or say NAME TEXT for one participant")
		}
		if len(f) > 2 && slices.Contains(names, f[1]) {
			return Command{Kind: Say, Target: f[1], Arg: strings.TrimSpace(strings.TrimPrefix(rest, f[1]))}, nil
		}
		return Command{Kind: Say, Arg: rest}, nil
	case End:
		if len(f) != 2 {
			return Command{}, fmt.Errorf("write end NAME")
		}
		return Command{Kind: End, Target: f[1]}, nil
	case Timer:
		if len(f) != 2 {
			return Command{}, fmt.Errorf("write timer 10m (or timer off)")
		}
		if f[1] == "off" {
			return Command{Kind: Timer, Arg: "off"}, nil
		}
		d, err := time.ParseDuration(f[1])
		if err != nil || d <= 0 || d > 24*time.Hour {
			return Command{}, fmt.Errorf("timer %s: write a duration such as 10m or 90s (or off)", f[1])
		}
		return Command{Kind: Timer, Arg: time.Now().Add(d).UTC().Format(time.RFC3339)}, nil
	}
	return Command{}, fmt.Errorf("%q is not a command: %s", f[0], Grammar)
}

// Until is a timer command's end; zero for "off".
func (c Command) Until() time.Time {
	t, _ := time.Parse(time.RFC3339, c.Arg)
	return t
}
