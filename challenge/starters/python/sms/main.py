"""The SMS challenge's starter: it meets the contract (CONTRACT.md) and runs,
and it is wrong in the ways the challenge is about. Change the places marked
CHANGE until `lab challenge run sms` passes.

Needs pika (Debian: python3-pika); the SMS goes out with urllib.
"""
import json
import os
import sys
import time
import urllib.request

import pika


def log(*args):
    print(os.environ.get("LAB_NAME", "consumer") + ":", *args, file=sys.stderr, flush=True)


def send(to, text):
    body = json.dumps({"to": to, "text": text}).encode()
    req = urllib.request.Request(os.environ["LAB_SMS_URL"], data=body, method="POST",
                                 headers={"Content-Type": "application/json"})
    # CHANGE: no Idempotency-Key, so every attempt is a new SMS; and an
    # answer that never comes is taken as "not sent".
    while True:
        try:
            with urllib.request.urlopen(req, timeout=2) as resp:
                if resp.status < 300:
                    return
        except Exception as err:  # a timeout, a 503
            log("send:", repr(err))
        time.sleep(0.1)


def main():
    conn = pika.BlockingConnection(pika.URLParameters(os.environ["LAB_AMQP_URL"]))
    ch = conn.channel()
    ch.basic_qos(prefetch_count=10)

    def on_message(ch, method, props, body):
        e = json.loads(body)
        send(e["user_id"], "Thank you: order %d is paid" % e["user_id"])
        ch.basic_ack(delivery_tag=method.delivery_tag)

    ch.basic_consume(queue=os.environ["LAB_QUEUE"], on_message_callback=on_message)
    ch.start_consuming()


if __name__ == "__main__":
    try:
        main()
    except Exception as err:  # a cut connection: exit and be restarted
        log("exit:", repr(err))
        sys.exit(1)
