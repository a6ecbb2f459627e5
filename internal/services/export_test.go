package services

// AMQPListeners is amqpListeners, for the tests.
var AMQPListeners = amqpListeners

// WithLog is withLog, for the tests.
var WithLog = withLog
