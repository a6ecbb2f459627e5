package main

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/rmlab/lab/internal/labtest"
	"github.com/rmlab/lab/internal/secret"
)

// TestNoInputOfAnyShapeMakesAnyCommandPrintAPassword runs every command
// that reads the services' addresses, with a password put into each shape a
// person might type (wrong password on the real servers, malformed DSNs and
// URLs, a password alone), given as a flag and as the environment, and
// reads everything the command printed.
func TestNoInputOfAnyShapeMakesAnyCommandPrintAPassword(t *testing.T) {
	passwords := []string{"Zq9s3cretPw", "Zq9:s3@cr/etPw"}
	inputs := []struct {
		env, flag, form string
	}{
		{"LAB_MYSQL_DSN", "--mysql", "root:%s@tcp(127.0.0.1:3306)/"}, // the real server refuses it
		{"LAB_MYSQL_DSN", "--mysql", "this is : not a dsn %s"},
		{"LAB_MYSQL_DSN", "--mysql", "mysql://root:%s@127.0.0.1:3306/"},
		{"LAB_MYSQL_DSN", "--mysql", "root:%s@127.0.0.1:3306/"},
		{"LAB_MYSQL_DSN", "--mysql", "root:%s"},
		{"LAB_MYSQL_DSN", "--mysql", "%s"},
		{"LAB_AMQP_URL", "--amqp", "amqp://guest:%s@127.0.0.1:5672/"}, // the real broker refuses it
		{"LAB_AMQP_URL", "--amqp", "amqp//guest:%s@localhost"},
		{"LAB_AMQP_URL", "--amqp", "amqp://guest:%s"},
		{"LAB_AMQP_URL", "--amqp", "amqp://guest:%s@127.0.0.1:1/"},
		{"LAB_MANAGEMENT_URL", "--management", "http://guest:%s@127.0.0.1:1/"},
		{"LAB_REDIS_ADDR", "--redis", "redis://:%s@127.0.0.1:6379"},
	}
	// Every command runs in this test's namespace: with one value wrong the
	// others still reach usable servers (a management URL nobody answers
	// at leaves MySQL, RabbitMQ and Redis to the command).
	ns := labtest.Connect(t).NS
	commands := [][]string{
		{"doctor"},
		{"replay", "idem-first-processing", "--namespace", ns},
		{"clean", "--namespace", ns},
		{"bench", "relay", "--events", "5", "--workers", "1", "--namespace", ns},
		{"open", "idem-first-processing", "--namespace", ns},
		{"--namespace", ns},
	}
	for _, pw := range passwords {
		for _, in := range inputs {
			value := fmt.Sprintf(in.form, pw)
			t.Run(in.env+" "+in.form, func(t *testing.T) {
				t.Parallel() // each run fails fast; many at once keep the test short
				check(t, value, in.env, in.flag, pw, commands)
			})
		}
	}
}

// check runs every command with the value given as the flag and as the
// environment variable, and fails on any piece of the password in the output.
func check(t *testing.T, value, envName, flagName, pw string, commands [][]string) {
	for _, cmd := range commands {
		for _, viaFlag := range []bool{false, true} {
			args := append([]string{}, cmd...)
			env := os.Environ()
			if viaFlag {
				args = append(args, flagName, value)
			} else {
				env = append(env, envName+"="+value)
			}
			c := exec.Command(labBin(t), append(args, "--no-docker")...)
			c.Env = env
			out, _ := c.CombinedOutput()
			for _, leak := range leaks(pw) {
				if strings.Contains(string(out), leak) {
					t.Errorf("lab %s with %s=%q printed %q:\n%s", strings.Join(cmd, " "), envName, value, leak, out)
					break
				}
			}
		}
	}
}

// leaks are the password and each of its pieces long enough to matter.
// A password holding a character plain text removes (a soft hyphen) is
// masked as it was typed, before the line is made plain: the other way
// round it no longer matched and its plain form reached the terminal.
func TestAPasswordIsMaskedBeforeItsLineIsMadePlain(t *testing.T) {
	pw := "Zq9s3\u00adcretPw"
	secret.Note(secret.KindDSN, "root:"+pw+"@tcp(127.0.0.1:3306)/")
	var out strings.Builder
	fmt.Fprintf(terminal(&out), "lab: a server quoted %s back\n", pw)
	for _, leak := range leaks(pw) {
		if strings.Contains(out.String(), leak) {
			t.Fatalf("printed %q: %q", leak, out.String())
		}
	}
	if !strings.Contains(out.String(), secret.Mask) {
		t.Fatalf("the password was not masked: %q", out.String())
	}
}

func leaks(pw string) []string {
	out := []string{pw}
	if plain := strings.ReplaceAll(pw, "\u00ad", ""); plain != pw {
		out = append(out, plain) // what a terminal shows of it
	}
	for _, p := range strings.FieldsFunc(pw, func(r rune) bool { return strings.ContainsRune(":@/", r) }) {
		if len(p) >= 4 {
			out = append(out, p)
		}
	}
	return out
}
