package worker

import (
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
)

// A process's environment and arguments are readable by every process of
// the same user (/proc/PID/environ, ps): a learner's program, which runs as
// that user, could read the lab's admin DSN out of any worker. The lab's
// own workers therefore get the variables that carry a login over a pipe
// they inherit as descriptor 3 (LAB_SECRETS_FD) and put them in their Go
// environment only, which /proc does not show; a learner's program gets
// none of the lab's, only the logins its run made for it.

// SecretKeys are the variables that may carry a password.
var SecretKeys = []string{"LAB_MYSQL_DSN", "LAB_AMQP_URL", "LAB_MANAGEMENT_URL", "LAB_BINLOG_DSN", "LAB_REDIS_ADDR"}

const secretsFD = "LAB_SECRETS_FD"

func isSecret(kv string) bool {
	k, _, _ := strings.Cut(kv, "=")
	return slices.Contains(SecretKeys, k) || k == secretsFD
}

// split is env without the secret variables, and those, the last value of
// each key winning.
func split(env []string) (plain, secrets []string) {
	last := map[string]int{}
	for _, kv := range env {
		if !isSecret(kv) {
			plain = append(plain, kv)
			continue
		}
		k, _, _ := strings.Cut(kv, "=")
		if k == secretsFD {
			continue
		}
		if i, ok := last[k]; ok {
			secrets[i] = kv
			continue
		}
		last[k] = len(secrets)
		secrets = append(secrets, kv)
	}
	return plain, secrets
}

// secretsPipe is a pipe holding secrets, its read end to hand to a child;
// the write end is written and closed here (a few hundred bytes: the pipe's
// buffer holds them before the child reads).
func secretsPipe(secrets []string) (*os.File, error) {
	r, w, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("a pipe for the worker's logins: %w", err)
	}
	_, err = io.WriteString(w, strings.Join(secrets, "\x00"))
	w.Close()
	if err != nil {
		r.Close()
		return nil, fmt.Errorf("write the worker's logins: %w", err)
	}
	return r, nil
}

var takeOnce sync.Once

// TakeSecrets reads the logins the parent sent over LAB_SECRETS_FD into
// this process's environment (once; a process started without one keeps
// its environment as it is).
func TakeSecrets() {
	takeOnce.Do(func() {
		v := os.Getenv(secretsFD)
		if v == "" {
			return
		}
		os.Unsetenv(secretsFD)
		fd, err := strconv.Atoi(v)
		if err != nil || fd < 3 {
			return
		}
		f := os.NewFile(uintptr(fd), "lab-secrets")
		defer f.Close()
		b, err := io.ReadAll(io.LimitReader(f, 1<<16))
		if err != nil {
			return
		}
		for _, kv := range strings.Split(string(b), "\x00") {
			if k, v, ok := strings.Cut(kv, "="); ok && slices.Contains(SecretKeys, k) {
				os.Setenv(k, v)
			}
		}
	})
}
