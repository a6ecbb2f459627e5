package services

import (
	"fmt"
	"strings"
)

// InContainers is which services the lab starts in containers even where
// local servers answer (--containers[=LIST], LAB_CONTAINERS): all three,
// or some, e.g. RabbitMQ 4 in a container beside a local MySQL and Redis.
// A service left out is found as without the flag: a default that does
// not answer still falls back to a container, a named one is awaited.
type InContainers uint8

const (
	MySQLInContainer InContainers = 1 << iota
	RabbitMQInContainer
	RedisInContainer

	AllInContainers = MySQLInContainer | RabbitMQInContainer | RedisInContainer
)

// containerNames are each service's bit, its name in a list and its
// field in Config's messages (From, fieldOf).
var containerNames = []struct {
	bit         InContainers
	name, field string
}{{MySQLInContainer, "mysql", "mysql"}, {RabbitMQInContainer, "rabbitmq", "amqp"}, {RedisInContainer, "redis", "redis"}}

// ParseInContainers reads a --containers or LAB_CONTAINERS value: 1, true,
// yes or all for the three; 0, false, no or nothing for none; else a
// comma-separated list of mysql, rabbitmq and redis.
func ParseInContainers(v string) (InContainers, error) {
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "1", "true", "yes", "all":
		return AllInContainers, nil
	case "", "0", "false", "no":
		return 0, nil
	}
	var set InContainers
	for _, part := range strings.Split(v, ",") {
		p := strings.ToLower(strings.TrimSpace(part))
		found := false
		for _, c := range containerNames {
			if p == c.name {
				set, found = set|c.bit, true
			}
		}
		if !found {
			return 0, fmt.Errorf("%q is not a service the lab starts in a container", part)
		}
	}
	return set, nil
}

// String is the set as ParseInContainers reads it ("" for none).
func (s InContainers) String() string {
	var names []string
	for _, c := range containerNames {
		if s&c.bit != 0 {
			names = append(names, c.name)
		}
	}
	return strings.Join(names, ",")
}

// Has says whether field's service ("mysql", "amqp", "redis") is in the set.
func (s InContainers) Has(field string) bool {
	for _, c := range containerNames {
		if c.field == field {
			return s&c.bit != 0
		}
	}
	return false
}

// Set makes *InContainers a flag.Value: bare --containers means all three
// (IsBoolFlag), --containers=redis,rabbitmq some.
func (s *InContainers) Set(v string) error {
	set, err := ParseInContainers(v)
	if err != nil {
		return fmt.Errorf("%v: want --containers (all three) or --containers=LIST of mysql, rabbitmq, redis", err)
	}
	*s = set
	return nil
}

// IsBoolFlag lets --containers stand alone.
func (s *InContainers) IsBoolFlag() bool { return true }
