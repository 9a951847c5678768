#!/usr/bin/python3
"""A fleet of real paho-mqtt 1.x clients for stormaudit's real-client corpus.

Each device is one paho.mqtt.client.Client with a reconnect manager beside
it, written the way the reference client's manager is: capped exponential
backoff with full jitter, the counter reset on a successful CONNACK, and an
audit record for every step, appended as one JSON line to --audit, with
the six fields of the reference client's ReconnectAudit record (client_id,
attempt, backoff_delay_s, outcome, clean_session, recorded_at) and a
reason_code on disconnects and refusals. The manager never writes what the MQTT library does
on its own, so the audit log is exactly what such a fleet would collect.

Modes:

  library  paho's loop_start() runs the library's own automatic reconnect
           (1, 2, 4 ... s, no jitter) beside the manager: two reconnect
           owners. The manager does not record disconnects.
  manual   the manager runs the network loop itself (client.loop()), so it
           is the only reconnect owner, and it records disconnects
           (outcome "disconnected"). --churn F makes that fraction of the
           devices restart a healthy connection now and then without
           recording why (a stale-callback bug): reconnect churn.
  churn    as library (loop_start(), the library's own reconnect beside
           the manager, no disconnects recorded), but the manager churns:
           after a successful connect its loop goes straight back to
           drawing a delay and connecting again (it checks is_connected()
           and continues into the next backoff instead of waiting for a
           loss), so every device tears down its live session every half
           second or so (the delay is drawn below 1 s).

--service (manual mode) has each device ask for its first useful service
after every connect: it subscribes to cmd/ID (QoS 1) and publishes a hello
to hello/ID (QoS 1); the recorder's application answers on cmd/ID, and the
device records that answer as a "connected" record of stage "service". A
device not answered within 5 s records a service "attempt_failed"
(failure_class transient) and says hello again, until it is answered or
its session ends.

--clock-skew FRACTION:SECONDS sets that fraction of the devices' clocks
SECONDS ahead (each device drawn from the seed and its client id): their
recorded_at stamps are that far from the true time. With --clock-step a
skewed clock steps back to the true time right after the device's first
reconnect after a loss (that connected record still carries the offset),
as an NTP fix that lands once the network is back. --clock-offsets PATH
writes the offsets drawn, {"client-id": seconds, ...}, as JSON.

SIGTERM or SIGINT stops the fleet: every manager writes "stopped" and
disconnects. Run by internal/testonly/realcorpus/gen (see docs/corpus.md); it needs
Debian's python3-paho-mqtt (1.6).
"""
import argparse
import json
import random
import signal
import sys
import threading
import time
from datetime import datetime, timedelta, timezone

import paho.mqtt.client as mqtt


class Audit:
    """Appends audit records, one JSON line each, from many threads."""

    def __init__(self, path):
        self.f = open(path, "a", buffering=1)
        self.lock = threading.Lock()

    def write(self, cid, outcome, attempt, delay, clean, offset=0.0, **extra):
        # The time is taken before the lock, as a logging call does: two
        # threads of one device may write in the other order. offset is how
        # far the device's clock is ahead.
        now = datetime.now(timezone.utc)
        if offset:
            now += timedelta(seconds=offset)
        rec = {"client_id": cid, "attempt": attempt, "backoff_delay_s": round(delay, 6),
               "outcome": outcome, "clean_session": clean,
               "recorded_at": now.isoformat()}
        rec.update(extra)
        line = json.dumps(rec)
        with self.lock:
            self.f.write(line + "\n")


class Policy:
    def __init__(self, base, cap, mult):
        self.base, self.cap, self.mult = base, cap, mult

    def ceiling(self, attempt):
        return min(self.cap, self.base * self.mult ** min(attempt, 64))

    def draw(self, rng, attempt):
        return rng.uniform(0, self.ceiling(attempt))


class Device:
    def __init__(self, cid, args, audit, stop, rng, offset=0.0):
        self.cid, self.args, self.audit, self.stop, self.rng = cid, args, audit, stop, rng
        self.offset = offset
        # library and churn: paho's loop_start() thread runs the network
        # loop (and its own automatic reconnect)
        self.threaded = args.mode in ("library", "churn")
        self.policy = Policy(args.base, args.cap, args.multiplier)
        self.up = threading.Event()
        self.lost = threading.Event()
        self.attempt = 0
        self.churner = rng.random() < args.churn
        self.configured = self.looping = False
        c = mqtt.Client(client_id=cid, clean_session=False)
        c.reconnect_delay_set(1, 120)  # paho's defaults, stated
        c.on_connect = self.on_connect
        c.on_disconnect = self.on_disconnect
        c.on_message = self.on_message
        if args.presence:  # its Last Will: the broker says it is offline
            c.will_set("status/" + cid, "offline", qos=1, retain=True)
        self.c = c
        self.serve_at = None  # when to say hello again, while not served
        self.was_lost = False  # it has lost a connection (--clock-step)
        # --outbox: one measurement a second, sent at once while connected,
        # else kept in an outbox of at most --outbox, the oldest dropped
        self.outbox, self.next_sample = 0, time.monotonic() + 1.0
        self.flushed = self.dropped = 0  # since its previous record
        # --commands: what its session's queue brought since its previous
        # record; seen holds the commands it ran, by seq
        self.up_since = None  # wall time of its last CONNACK
        self.queued = self.expired = self.twice = 0
        self.seen = set()

    def rec(self, outcome, delay=0.0, **extra):
        if self.args.outbox:
            self.sample()
            extra.update(outbox_depth=self.outbox, outbox_flushed=self.flushed, outbox_dropped=self.dropped)
            self.flushed = self.dropped = 0
        if self.args.commands:
            extra.update(inbound_redelivered=self.queued, inbound_expired=self.expired, inbound_duplicates=self.twice)
            self.queued = self.expired = self.twice = 0
        self.audit.write(self.cid, outcome, self.attempt, delay, False, self.offset, **extra)

    def sample(self):
        """Takes the measurements due since the last: each goes out at
        once while connected, else into the outbox, dropping the oldest
        when it is full; a connected device flushes its outbox."""
        now = time.monotonic()
        while self.next_sample <= now:
            self.next_sample += 1.0
            if not self.up.is_set():
                if self.outbox == self.args.outbox:
                    self.dropped += 1
                else:
                    self.outbox += 1
        if self.up.is_set() and self.outbox:
            self.flushed += self.outbox
            self.outbox = 0

    def command(self, payload):
        """Runs a command the recorder's commander sent: one its session's
        queue brought (sent before its last CONNACK) counts as redelivered,
        ignored when its valid_until has passed, and counted twice when it
        ran before (the device does not de-duplicate)."""
        try:
            cmd = json.loads(payload)
            seq, sent, valid = int(cmd["seq"]), float(cmd["sent"]), float(cmd["valid_until"])
        except (ValueError, KeyError, TypeError):
            return
        if self.up_since is None or sent >= self.up_since:
            self.seen.add(seq)  # live: run at once
            return
        self.queued += 1
        if time.time() > valid:
            self.expired += 1
        elif seq in self.seen:
            self.twice += 1
        else:
            self.seen.add(seq)

    def on_connect(self, client, userdata, flags, rc):
        if rc == 0:
            self.attempt = 0
            self.up_since = time.time()
            self.rec("connected")  # its outbox_depth: the backlog its session starts with
            if self.args.commands:
                client.subscribe("cmd/" + self.cid, 1)
            if self.args.clock_step and self.was_lost:
                self.offset = 0.0  # its NTP fix lands once the network is back
            self.lost.clear()
            self.up.set()
            if self.args.presence:  # it says it is online, for whoever asks later
                client.publish("status/" + self.cid, "online", qos=1, retain=True)
            if self.args.service:
                client.subscribe("cmd/" + self.cid, 1)
                self.hello()
        else:
            self.rec("refused", reason_code=rc)

    def hello(self):
        """Asks the application for service; the answer is due in 5 s."""
        self.c.publish("hello/" + self.cid, "hello", qos=1)
        self.serve_at = time.monotonic() + 5

    def on_message(self, client, userdata, msg):
        if self.args.commands and msg.topic == "cmd/" + self.cid:
            self.command(msg.payload)
            return
        if msg.topic == "cmd/" + self.cid and self.serve_at is not None and self.up.is_set():
            self.serve_at = None
            self.rec("connected", stage="service")

    def check_service(self):
        """Records a service timeout and asks again, when one is due."""
        if self.serve_at is not None and self.up.is_set() and time.monotonic() >= self.serve_at:
            self.rec("attempt_failed", stage="service", failure_class="transient")
            self.hello()

    def on_disconnect(self, client, userdata, rc):
        if self.args.outbox:
            self.sample()  # what was due while it was up went out
        self.serve_at = None
        if rc != 0:
            self.was_lost = True
        was_up = self.up.is_set()
        self.up.clear()
        if rc != 0 and not self.stop.is_set():
            if self.args.mode == "manual" and was_up:
                self.rec("disconnected", reason_code=rc)
            self.lost.set()

    def wait_connack(self, timeout):
        """Waits for the CONNACK of a connect just sent."""
        if self.threaded:
            return self.up.wait(timeout)
        end = time.monotonic() + timeout
        while time.monotonic() < end and not self.up.is_set():
            if self.c.loop(timeout=0.1) != mqtt.MQTT_ERR_SUCCESS:
                return False
        return self.up.is_set()

    def open_socket(self):
        """One socket-open: connect or reconnect; True once CONNACK came."""
        try:
            if not self.configured:
                self.configured = True
                self.c.connect(self.args.host, self.args.port, keepalive=self.args.keepalive)
            else:
                self.c.reconnect()
        except OSError:
            return False
        if self.threaded and not self.looping:
            self.looping = True
            self.c.loop_start()
        return self.wait_connack(5)

    def backoff(self):
        """Retries until connected, as the reference manager does."""
        self.attempt = 0
        while not self.stop.is_set():
            if self.up.is_set():
                return  # another owner (the library) connected the client
            delay = self.policy.draw(self.rng, self.attempt)
            self.rec("backoff_wait", delay)
            if self.stop.wait(delay):
                return
            if self.up.is_set():
                return
            if self.open_socket():
                return
            if self.up.is_set():
                return
            self.attempt += 1
            self.rec("attempt_failed", delay)

    def run(self):
        if self.args.mode == "churn":
            self.run_churn()
            return
        self.backoff()
        next_churn = time.monotonic() + self.rng.uniform(8, 16)
        while not self.stop.is_set():
            if self.args.mode == "library":
                if self.lost.wait(0.2):
                    self.backoff()
                continue
            if not self.up.is_set():
                self.backoff()
                continue
            if self.c.loop(timeout=0.2) != mqtt.MQTT_ERR_SUCCESS and not self.up.is_set():
                self.lost.set()
                continue
            self.check_service()
            if self.churner and time.monotonic() >= next_churn:
                next_churn = time.monotonic() + self.rng.uniform(8, 16)
                self.churn()
        self.rec("stopped")
        try:
            if self.args.presence and self.up.is_set():
                self.c.publish("status/" + self.cid, "offline", qos=1, retain=True)
            self.c.disconnect()
            if self.args.mode == "library":
                self.c.loop_stop()
            else:
                self.c.loop(timeout=0.2)
        except OSError:
            pass

    def run_churn(self):
        """The churning manager: its loop never waits for a loss. After a
        successful connect it goes straight back to the next backoff and
        connects again, tearing down the session it has."""
        self.attempt = 0
        while not self.stop.is_set():
            delay = self.policy.draw(self.rng, self.attempt)
            self.rec("backoff_wait", delay)
            if self.stop.wait(delay):
                break
            self.up.clear()
            if self.open_socket():
                continue  # connected: on to the next backoff (the bug)
            if self.c.is_connected():
                continue  # the library's reconnect got there: the same
            self.attempt += 1
            self.rec("attempt_failed", delay)
        self.rec("stopped")
        try:
            if self.args.presence and self.up.is_set():
                self.c.publish("status/" + self.cid, "offline", qos=1, retain=True)
            self.c.disconnect()
            self.c.loop_stop()
        except OSError:
            pass

    def churn(self):
        """Restarts a healthy connection without recording why."""
        delay = self.policy.draw(self.rng, 0)
        self.rec("backoff_wait", delay)
        if self.stop.wait(delay):
            return
        self.up.clear()
        if not self.open_socket():
            self.attempt += 1
            self.rec("attempt_failed", delay)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--host", default="127.0.0.1")
    ap.add_argument("--port", type=int, required=True)
    ap.add_argument("--devices", type=int, default=100)
    ap.add_argument("--prefix", default="py")
    ap.add_argument("--mode", choices=["library", "manual", "churn"], required=True)
    ap.add_argument("--audit", required=True)
    ap.add_argument("--base", type=float, default=1.0)
    ap.add_argument("--cap", type=float, default=30.0)
    ap.add_argument("--multiplier", type=float, default=2.0)
    ap.add_argument("--keepalive", type=int, default=30)
    ap.add_argument("--boot-spread", type=float, default=4.0, help="devices boot over this many seconds")
    ap.add_argument("--churn", type=float, default=0.0)
    ap.add_argument("--outbox", type=int, default=0, help="a measurement a second, kept while offline in an outbox of at most this many (0: none)")
    ap.add_argument("--commands", action="store_true", help="subscribe to cmd/ID and run the commander's commands, ignoring expired ones")
    ap.add_argument("--presence", action="store_true", help="a retained offline will, and a retained online on each connect, on status/ID")
    ap.add_argument("--service", action="store_true", help="ask the application for service after each connect (manual mode)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--clock-skew", default="", metavar="FRACTION:SECONDS",
                    help="that fraction of the devices have clocks SECONDS ahead")
    ap.add_argument("--clock-offsets", default="", metavar="PATH", help="write the clock offsets drawn here (JSON)")
    ap.add_argument("--clock-step", action="store_true",
                    help="a skewed clock steps back to the true time right after its first reconnect after a loss")
    args = ap.parse_args()
    skew_fraction, skew_s = 0.0, 0.0
    if args.clock_skew:
        f, _, sec = args.clock_skew.partition(":")
        skew_fraction, skew_s = float(f), float(sec)

    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    signal.signal(signal.SIGINT, lambda *_: stop.set())
    audit = Audit(args.audit)
    master = random.Random(args.seed)
    threads = []
    offsets = {}
    for i in range(args.devices):
        cid = "%s-%04d" % (args.prefix, i + 1)
        # the clock is drawn apart from the device's own random numbers, so
        # that a skew leaves every delay as it was
        if skew_fraction > 0 and random.Random("clock:%d:%s" % (args.seed, cid)).random() < skew_fraction:
            offsets[cid] = skew_s
        d = Device(cid, args, audit, stop, random.Random(master.getrandbits(64)), offsets.get(cid, 0.0))
        t = threading.Thread(target=d.run, daemon=True)
        threads.append(t)
    if args.clock_offsets:
        with open(args.clock_offsets, "w") as f:
            json.dump(offsets, f, indent=1, sort_keys=True)
    gap = args.boot_spread / max(1, args.devices)
    for t in threads:
        t.start()
        time.sleep(gap)
    print("fleet: %d devices running" % args.devices, file=sys.stderr, flush=True)
    while not stop.is_set():
        stop.wait(0.5)
    for t in threads:
        t.join(10)
    print("fleet: stopped", file=sys.stderr, flush=True)


if __name__ == "__main__":
    main()
