package services_test

import (
	"context"
	"flag"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rmlab/lab/internal/services"
)

func TestContainersTakesAllThreeOrAListOfServices(t *testing.T) {
	for _, c := range []struct {
		in   string
		want services.InContainers
		bad  bool
	}{
		{"1", services.AllInContainers, false},
		{"true", services.AllInContainers, false},
		{"all", services.AllInContainers, false},
		{"", 0, false},
		{"0", 0, false},
		{"redis", services.RedisInContainer, false},
		{"RabbitMQ, redis", services.RabbitMQInContainer | services.RedisInContainer, false},
		{"mysql,rabbitmq,redis", services.AllInContainers, false},
		{"postgres", 0, true},
		{"redis,", 0, true},
		{"amqp", 0, true}, // the service's name, not the field's
	} {
		got, err := services.ParseInContainers(c.in)
		if (err != nil) != c.bad || got != c.want {
			t.Errorf("ParseInContainers(%q) = %s, %v; want %s, error %t", c.in, got, err, c.want, c.bad)
		}
	}
}

func TestTheContainersFlagStandsAloneOrTakesAList(t *testing.T) {
	for _, c := range []struct {
		args []string
		want services.InContainers
		bad  bool
	}{
		{nil, 0, false},
		{[]string{"--containers"}, services.AllInContainers, false},
		{[]string{"--containers=redis"}, services.RedisInContainer, false},
		{[]string{"--containers=mysql,redis"}, services.MySQLInContainer | services.RedisInContainer, false},
		{[]string{"--containers=mongo"}, 0, true},
	} {
		fs := flag.NewFlagSet("lab", flag.ContinueOnError)
		fs.SetOutput(io.Discard)
		var set services.InContainers
		fs.Var(&set, "containers", "")
		err := fs.Parse(c.args)
		if (err != nil) != c.bad || set != c.want {
			t.Errorf("%v: %s, %v; want %s, error %t", c.args, set, err, c.want, c.bad)
		}
	}
}

// A flag wins over LAB_CONTAINERS; a value that is no list of services
// fails before any network, naming the variable, and is quoted only when
// it is plainly a list of words.
func TestLabContainersIsReadUnlessTheFlagSaysAndABadValueIsRefused(t *testing.T) {
	t.Setenv("LAB_CONTAINERS", "rabbitmq")
	if got := (services.Config{}).FromEnv().Containers; got != services.RabbitMQInContainer {
		t.Errorf("LAB_CONTAINERS=rabbitmq read as %s", got)
	}
	if got := (services.Config{Containers: services.RedisInContainer}).FromEnv().Containers; got != services.RedisInContainer {
		t.Errorf("--containers=redis with LAB_CONTAINERS=rabbitmq read as %s", got)
	}
	for _, c := range []struct{ value, want, never string }{
		{"postgres", `"postgres" is not a service`, ""},
		{"amqp://guest:s3cretpw@mq:5672/", "its value is not shown", "s3cretpw"},
	} {
		t.Setenv("LAB_CONTAINERS", c.value)
		err := services.Config{}.FromEnv().Validate()
		if err == nil {
			t.Errorf("LAB_CONTAINERS=%s was accepted", c.value)
			continue
		}
		msg := err.Error()
		if !strings.Contains(msg, c.want) || !strings.Contains(msg, "LAB_CONTAINERS") || !strings.Contains(msg, "fix:") {
			t.Errorf("LAB_CONTAINERS=%s: %q does not say %q, the variable and the fix", c.value, msg, c.want)
		}
		if c.never != "" && strings.Contains(msg, c.never) {
			t.Errorf("LAB_CONTAINERS=%s: the error shows it: %q", c.value, msg)
		}
	}
}

// The lab's own RabbitMQ nodes are containers when RabbitMQ is, not when
// only MySQL or Redis is (a server script is there to start them from).
func TestTheLabsNodesAreContainersOnlyWhenRabbitMQIs(t *testing.T) {
	script := filepath.Join(t.TempDir(), "rabbitmq-server")
	if err := os.WriteFile(script, []byte("#!/bin/sh\nexit 1\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("LAB_RABBITMQ_SERVER", script)
	t.Setenv("LAB_OWN_BROKER", "")
	for _, c := range []struct {
		set  services.InContainers
		want bool
	}{
		{0, false},
		{services.RedisInContainer | services.MySQLInContainer, false},
		{services.RabbitMQInContainer, true},
		{services.AllInContainers, true},
	} {
		_, boxed, note := services.OwnNodes(context.Background(), services.Config{Containers: c.set})
		if boxed != c.want {
			t.Errorf("--containers=%s: nodes as containers %t, want %t (%s)", c.set, boxed, c.want, note)
		}
	}
}

// Has speaks Config's field names (mysql, amqp, redis), which From and
// the probe's errors use, not the list's.
func TestHasNamesAServiceByItsConfigField(t *testing.T) {
	set := services.RabbitMQInContainer | services.RedisInContainer
	for field, want := range map[string]bool{"mysql": false, "amqp": true, "redis": true, "rabbitmq": false, "": false} {
		if got := set.Has(field); got != want {
			t.Errorf("(%s).Has(%q) = %t, want %t", set, field, got, want)
		}
	}
}
