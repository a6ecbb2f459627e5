package main

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rmlab/lab/internal/labtest"
	"github.com/rmlab/lab/internal/room"
)

// hostile is one of each escape family a terminal acts on (OSC 8, 52 and
// 2, CSI 2J and DSR, C1 CSI, BEL, a bidi override) around text that must
// survive.
const hostile = "ev\x1b]8;;https://evil.example\x1b\\il\x1b]8;;\x1b\\" + "\x1b]52;c;cm0gLXJm\x07" + "\x1b]2;title\x07" +
	"\x1b[2J\x1b[6n" + "\u009b2J" + "\x07" + "\u202eok"

// escapes lists the controls, C1 characters and bidi controls in s (line
// breaks aside).
func escapes(s string) []string {
	var out []string
	for _, r := range s {
		if r != '\n' && (r < 0x20 || r == 0x7f || r >= 0x80 && r < 0xa0 || r >= 0x202a && r <= 0x202e || r >= 0x2066 && r <= 0x2069) {
			out = append(out, strings.ToUpper(string(rune(r))))
		}
	}
	return out
}

// Whatever anyone wrote into the room's tables (a forged participant row:
// name, lesson, server, verdicts, the failed step's text, a challenge's
// verdict line and command; an audit line), lab room shows as plain text,
// in its table, --json, --csv (no cell a spreadsheet runs as a formula)
// and --log; the text around each escape survives.
func TestNothingFromTheRoomsTablesReachesTheInstructorsTerminalRaw(t *testing.T) {
	env := labtest.Connect(t, labtest.MySQL)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	rm, err := room.Open(ctx, env.Svc.MySQL, env.Svc.Config.MySQL, env.NS, "escape-test")
	if err != nil {
		t.Fatal(err)
	}
	rm.Close()
	prog, _ := json.Marshal(map[string]any{
		"activity": map[string]any{"lesson": "idem-first-processing", "fail_step": "[1/2] " + hostile, "fail_why": "=HYPERLINK(\"http://x\") " + hostile},
		"challenges": map[string]any{"once": map[string]any{"runs": 1, "last": hostile, "command": []string{hostile}, "dir": hostile,
			"updated": time.Now()}},
	})
	db := room.DBName(env.NS)
	if _, err := env.Svc.MySQL.ExecContext(ctx, "INSERT INTO "+db+".participant VALUES (?, ?, ?, 1, 2, NOW(6), 0, 1, ?, ?, NOW(6))",
		"n\x1b]2;t\x07\u009b2Jx", "s\x1b[2J"+"\u202ev", "l\x1b]52;c;eA==\x07", "v"+hostile, string(prog)); err != nil {
		t.Fatal(err)
	}
	if _, err := env.Svc.MySQL.ExecContext(ctx, "INSERT INTO "+db+".audit (at, server, line, kind) VALUES (NOW(6), ?, ?, 'refusals')", "s\x1b]2;t\x07", "refused "+hostile); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{}, {"--json"}, {"--csv"}, {"--log"}, {"--log", "--kind", "refusals"}} {
		out, errOut, code := runLab(t, append([]string{"room", "--room", env.NS}, args...)...)
		what := "lab room " + strings.Join(args, " ")
		if code != 0 {
			t.Fatalf("%s: exit %d\n%s", what, code, errOut)
		}
		if e := escapes(out + errOut); len(e) > 0 {
			t.Errorf("%s hands the terminal %q:\n%q", what, e, out)
		}
		if !strings.Contains(out, "evil") {
			t.Errorf("%s lost the text around the escapes:\n%s", what, out)
		}
		if len(args) > 0 && args[0] == "--json" {
			var v struct {
				Participants []struct {
					Name       string `json:"name"`
					Challenges map[string]struct {
						Last string `json:"last"`
					} `json:"challenges"`
				} `json:"participants"`
			}
			if err := json.Unmarshal([]byte(out), &v); err != nil || len(v.Participants) != 1 {
				t.Fatalf("%s: %v\n%s", what, err, out)
			}
		}
		if len(args) > 0 && args[0] == "--csv" {
			rows, err := csv.NewReader(strings.NewReader(out)).ReadAll()
			if err != nil {
				t.Fatalf("%s: %v", what, err)
			}
			for _, row := range rows {
				for _, cell := range row {
					if cell != "" && strings.ContainsRune("=+-@", rune(cell[0])) {
						t.Errorf("%s: a cell a spreadsheet runs: %q", what, cell)
					}
				}
			}
		}
	}
}

// A lesson file anyone could hand an instructor prints plainly wherever
// the lab quotes it (lab list's title, lab check's problem with a needs:
// value), as does any outside text the lab's own output quotes: its stdout
// and stderr hold no escape.
func TestALessonFilesTextReachesTheTerminalPlain(t *testing.T) {
	src, err := os.ReadFile("../../ui/testdata/worker-lessons/en/02-fixture-workers.md")
	if err != nil {
		t.Fatal(err)
	}
	titled := strings.Replace(string(src), "# Three consumers", "# Three "+hostile+" consumers", 1)
	needs := strings.Replace(string(src), "part: idempotency\n", "part: idempotency\nneeds: own"+hostile+"broker\n", 1)
	for _, c := range []struct{ lesson, cmd, want string }{
		{titled, "list", "consumers"},
		{needs, "check", "is not a capability"},
	} {
		dir := t.TempDir()
		if err := os.MkdirAll(filepath.Join(dir, "en"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "en", "02-fixture-workers.md"), []byte(c.lesson), 0o644); err != nil {
			t.Fatal(err)
		}
		args := []string{c.cmd, dir}
		if c.cmd == "list" {
			args = []string{c.cmd, "--lessons", dir}
		}
		out, errOut, _ := runLab(t, args...)
		all := out + errOut
		if e := escapes(all); len(e) > 0 {
			t.Errorf("lab %s wrote %q to the terminal:\n%q", c.cmd, e, all)
		}
		for _, want := range []string{c.want, "evil"} {
			if !strings.Contains(all, want) {
				t.Errorf("lab %s lost the text around the escapes (%q):\n%s", c.cmd, want, all)
			}
		}
	}
}
