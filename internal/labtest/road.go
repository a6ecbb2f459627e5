package labtest

import (
	"context"
	"errors"
	"io"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/rmlab/lab/internal/services"
)

// road is the container road, taken as the lab takes it: where a service
// left at its default address does not answer and a Docker engine does (or
// LAB_CONTAINERS asks for containers, as `lab --containers` does), this
// process's tests run on containers the lab starts, one set for the whole
// process, removed when it ends. A machine with Docker and nothing else runs
// the README's test command as it is. The containers' addresses go into the
// LAB_* variables, so the labs and workers a test starts use them too.
var road struct {
	svc   *services.Services
	tried bool
	err   error // a road that failed fails every later test the same way, without starting containers again
}

// takeRoad is called once, by the process's first test, before anything
// connects; it says what it started on the go command's output.
func takeRoad() error {
	if road.tried {
		return road.err
	}
	road.tried = true
	road.err = roadOnce()
	return road.err
}

func roadOnce() error {
	if !wantsRoad() {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), services.StartLimit+time.Minute)
	defer cancel()
	svc, err := services.Connect(ctx, services.Config{}, false)
	if err != nil {
		return err
	}
	// A container that did not start is the road's failure, said as the
	// lab says it (its log, its processes), never the unanswered address
	// the tests would meet next.
	if err := errors.Join(svc.Info.MySQLErr, svc.Info.AMQPErr, svc.Info.RedisErr); err != nil {
		svc.Close()
		return err
	}
	if len(svc.Info.Started) == 0 {
		svc.Close() // everything answered where it was: no road
		return nil
	}
	road.svc = svc
	set := map[string]string{"LAB_MYSQL_DSN": svc.Config.MySQL, "LAB_AMQP_URL": svc.Config.AMQP,
		"LAB_REDIS_ADDR": svc.Config.Redis, "LAB_MANAGEMENT_URL": svc.Config.Management}
	for k, v := range set {
		if v != "" {
			os.Setenv(k, v)
		}
	}
	// What starts here uses these containers, never containers of its own.
	os.Unsetenv("LAB_CONTAINERS")
	line := "labtest: " + packageDir() + " runs on containers the lab started (" + strings.Join(svc.Info.Started, "; ") + "), removed when its tests end\n"
	var w io.Writer = os.Stderr
	if f := goCommandStdout(); f != nil && !testing.Verbose() {
		defer f.Close()
		w = f
	}
	io.WriteString(w, line)
	return nil
}

// wantsRoad: containers were asked for, or a service left at its default
// address does not answer while an engine does.
func wantsRoad() bool {
	if os.Getenv("LAB_CONTAINERS") != "" {
		return true
	}
	if probe(dockerTool) != nil {
		return false
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	svc, err := services.Connect(ctx, services.Config{NoDocker: true}, false)
	if err != nil {
		return false // a malformed LAB_* value: the first test says so
	}
	defer svc.Close()
	cfg := svc.Config
	return cfg.From("mysql") == "default" && svc.Info.MySQLErr != nil ||
		cfg.From("amqp") == "default" && svc.Info.AMQPErr != nil ||
		cfg.From("redis") == "default" && svc.Info.RedisErr != nil
}

// leaveRoad removes the road's containers (Main, after the last sweep).
func leaveRoad() {
	if road.svc != nil {
		road.svc.Close()
		road.svc = nil
	}
}
