package services

// AMQPListeners is amqpListeners, for the tests.
var AMQPListeners = amqpListeners
