package broker

import (
	"context"
	"fmt"
	"os/exec"
	"strings"
	"time"

	"github.com/rmlab/lab/internal/services"
)

// Restart stops and starts the RabbitMQ application on the local node with
// ctl, rabbitmqctl or a wrapper naming the node (the Erlang VM stays up, so this takes seconds, not a full
// boot), then waits until the broker accepts AMQP connections again. Every
// connection to the broker drops, including other programs'. It returns the
// commands it ran, each with how long it took.
//
// The caller must have checked that the lab may do this (--broker-control
// rabbitmqctl on a local node; services.Info.BrokerControl).
func Restart(ctx context.Context, ctl, amqpURL string) ([]string, time.Duration, error) {
	start := time.Now()
	var ran []string
	for _, args := range [][]string{{"stop_app"}, {"start_app"}, {"await_startup"}} {
		t := time.Now()
		c, cancel := context.WithTimeout(ctx, 2*time.Minute)
		out, err := exec.CommandContext(c, ctl, args...).CombinedOutput()
		cancel()
		ran = append(ran, fmt.Sprintf("rabbitmqctl %s (%.1fs)", strings.Join(args, " "), time.Since(t).Seconds()))
		if err != nil {
			return ran, time.Since(start), fmt.Errorf("rabbitmqctl %s: %v: %s\n  fix: run `rabbitmqctl start_app` yourself if the broker stays down",
				strings.Join(args, " "), err, lastLines(string(out), 3))
		}
	}
	t := time.Now()
	if err := waitAnswers(ctx, amqpURL, time.Minute); err != nil {
		return ran, time.Since(start), err
	}
	ran = append(ran, fmt.Sprintf("AMQP connection accepted again (%.1fs)", time.Since(t).Seconds()))
	return ran, time.Since(start), nil
}

// waitAnswers dials until the broker completes an AMQP handshake.
func waitAnswers(ctx context.Context, url string, limit time.Duration) error {
	deadline := time.Now().Add(limit)
	for {
		conn, err := services.DialAMQP(ctx, url)
		if err == nil {
			conn.Close()
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("RabbitMQ did not accept connections within %s after start_app: %w", limit, err)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, " / ")
}
