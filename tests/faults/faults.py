#!/usr/bin/env python3
"""Waymark fault-injection suite (driver). Run it through tests/faults/run-faults.sh.

Each fault is one run of the same simulated venue (`waymark simulate --publish`, fixed seed) through
a fresh database, with the fault injected at evenly spaced moments; every run is compared with an
uninterrupted baseline run of the same input:

  * batches and raw sighting rows against what the simulator generated (the same scenario written
    offline with --batches: exact keys (gateway, boot, seq, device)), lost and duplicated;
  * the ingest rollups (gateway_ingest_hourly, summed per gateway) against the same;
  * the derived rows (region_events, visits, transitions, journeys) row for row against the
    baseline, times relative to each run's simulated start, surrogate ids left out;
  * the simulator's resends per published batch and whether everything was acked.

Expects the services started by scripts/services.sh (WAYMARK_SERVICES_DIR, WAYMARK_MQTT_PORT,
WAYMARK_PG_PORT, WAYMARK_PG_BIN in the environment); it restarts Mosquitto and PostgreSQL itself
for the broker and PostgreSQL faults.
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import math
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

# --------------------------------------------------------------------------------------------------
# Acceptance thresholds (the acceptance criteria). A run fails a check when it is outside.
# --------------------------------------------------------------------------------------------------
MAX_LOST_BATCHES = 0              # batches published but not stored
MAX_DUPLICATED_BATCHES = 0        # batches whose sighting rows were stored more than once
MAX_LOST_SIGHTING_ROWS = 0        # sighting rows generated but not stored
MAX_DUPLICATED_SIGHTING_ROWS = 0  # sighting rows stored more than once
REQUIRE_EXACT_ROLLUPS = True      # gateway_ingest_hourly totals per gateway == batches / sightings generated
REQUIRE_ALL_ACKED = True          # the simulator ends with nothing unacked
# Derived rows (each of visits, region events, transitions, journeys): % identical to the baseline
# = common rows (multiset intersection) / max(rows in the run, rows in the baseline).
MIN_IDENTICAL_PCT_IDLE = 100.0    # a second uninterrupted run, idle stop/start (SIGTERM, SIGKILL)
MIN_IDENTICAL_PCT_OTHER = 99.5    # every other fault
# Idle: the simulator (the gateways) is paused (SIGSTOP) IDLE_SETTLE_S before the stop, so nothing
# is in flight or uncommitted, and resumed (SIGCONT) once the restarted aggregator is connected.
IDLE_FAULTS = ("none", "sigterm-idle", "sigkill-idle")
IDLE_SETTLE_S = 4.0  # > ingest.reorder_window_s (2 s: held batches released) + a flush (1 s)
MAX_RESENDS_PER_BATCH = 1.5       # simulator's re-sent / published ...
RESEND_CHECKED_FAULTS = ("sigkill", "sigkill-shards")  # ... after the aggregator kills

DERIVED = ("visits", "region_events", "transitions", "journeys")
# Runs whose derived-row shortfall is a known, documented gap (--known-gap): reported under "Known
# gaps", not failing the suite. Every other check of those runs still fails the suite.
KNOWN_GAPS: set[str] = set()

# What each form of the suite runs.
PLANS = {
    "full": dict(duration="15m", duration_s=900, speedup=12.0, devices=40, seed=1,
                 term=10, kill=10, broker=2, pgstop=3, cut=3),
    "short": dict(duration="5m", duration_s=300, speedup=12.0, devices=40, seed=1,
                  term=3, kill=3, broker=1, pgstop=1, cut=1),
}
FAULTS = ("none", "sigterm-idle", "sigkill-idle", "sigterm", "sigkill", "broker", "pgstop", "pgstop-durable", "cut",
          "sigkill-shards")
# Runs named "…-shards" use two aggregators on the two shards of the site (docs/scaling.md §1), the
# gateways publishing one batch per shard and window (`waymark simulate --shards 2`); they are
# compared with "baseline-shards", an uninterrupted sharded run. The fault hits the aggregator of
# shard 1; shard 0's runs untouched alongside it.
SHARDS = 2


def sharded(name: str) -> bool:
    return name.endswith("-shards")


def shard_of(device: str, count: int) -> int:
    """The shard of a device id: FNV-1a 64 of its UTF-8 modulo the count (WaymarkCore's ShardLayout)."""
    h = 0xCBF29CE484222325
    for b in device.encode():
        h = ((h ^ b) * 0x100000001B3) & 0xFFFFFFFFFFFFFFFF
    return h % count
RESEND_AFTER_S = 5
ACK_WAIT_S = 60
JOURNEY_TIMEOUT_S = 60     # the site copy's fusion.journey_timeout_s (museum.yaml: 600)
RESTART_PAUSE_S = 1.0      # aggregator restarted this long after it exited
BROKER_DOWN_S = 2.0        # Mosquitto restarted this long after SIGKILL
PG_DOWN_S = 3.0            # PostgreSQL restarted this long after `pg_ctl stop -m immediate`

ROOT = Path(__file__).resolve().parents[2]


def log(msg: str) -> None:
    print(f"[faults {time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


def free_port() -> int:
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def port_open(port: int) -> bool:
    s = socket.socket()
    s.settimeout(0.5)
    try:
        return s.connect_ex(("127.0.0.1", port)) == 0
    finally:
        s.close()


# --------------------------------------------------------------------------------------------------
# Services: the Mosquitto and PostgreSQL that scripts/services.sh started.
# --------------------------------------------------------------------------------------------------
class Services:
    def __init__(self) -> None:
        self.dir = Path(os.environ["WAYMARK_SERVICES_DIR"])
        self.mqtt_port = int(os.environ["WAYMARK_MQTT_PORT"])
        self.pg_port = int(os.environ["WAYMARK_PG_PORT"])
        self.pg_bin = Path(os.environ["WAYMARK_PG_BIN"])
        self.pgdata = self.dir / "pgdata"
        self.as_pg = ["runuser", "-u", "postgres", "--"] if os.geteuid() == 0 else []
        self.durable = False

    @property
    def mqtt_url(self) -> str:
        return f"mqtt://127.0.0.1:{self.mqtt_port}"

    def db_url(self, db: str, port: int | None = None, extra: str = "") -> str:
        return f"postgresql://waymark@127.0.0.1:{port or self.pg_port}/{db}{extra}"

    # PostgreSQL ---------------------------------------------------------------------------------
    def pg_options(self, durable: bool) -> str:
        v = "on" if durable else "off"
        return (f"-p {self.pg_port} -k {self.dir} -c listen_addresses=127.0.0.1 -c fsync={v} "
                f"-c synchronous_commit={v} -c full_page_writes={v} -c max_connections=100")

    def pg_ctl(self, *args: str, check: bool = True) -> subprocess.CompletedProcess:
        return subprocess.run([*self.as_pg, str(self.pg_bin / "pg_ctl"), "-D", str(self.pgdata), *args],
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, check=check)

    def pg_start(self, durable: bool | None = None) -> None:
        if durable is not None:
            self.durable = durable
        self.pg_ctl("-l", str(self.dir / "postgres.log"), "-w", "-t", "120", "-o", self.pg_options(self.durable), "start")

    def pg_stop(self, mode: str) -> None:
        self.pg_ctl("-m", mode, "-w", "-t", "120", "stop")

    def pg_set_durable(self, durable: bool) -> None:
        if durable == self.durable:
            return
        self.pg_stop("fast")
        self.pg_start(durable)
        fsync = self.psql("postgres", "SHOW fsync").strip()
        log(f"PostgreSQL restarted with fsync={fsync}")

    def psql(self, db: str, sql: str, user: str = "postgres") -> str:
        r = subprocess.run(["psql", "-h", "127.0.0.1", "-p", str(self.pg_port), "-U", user, "-d", db,
                            "-qAtX", "-F", "\t", "-v", "ON_ERROR_STOP=1", "-c", sql],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        if r.returncode != 0:
            raise RuntimeError(f"psql {db}: {r.stderr.strip()}")
        return r.stdout

    # Mosquitto ----------------------------------------------------------------------------------
    def mosquitto_pid(self) -> int | None:
        try:
            return int((self.dir / "mosquitto.pid").read_text().split()[0])
        except (OSError, ValueError, IndexError):
            return None

    def mosquitto_kill(self) -> None:
        pid = self.mosquitto_pid()
        if pid is None:
            raise RuntimeError("no mosquitto.pid")
        os.kill(pid, signal.SIGKILL)
        for _ in range(100):
            try:
                os.kill(pid, 0)
            except ProcessLookupError:
                break
            time.sleep(0.05)
        (self.dir / "mosquitto.pid").write_text("")

    def mosquitto_start(self) -> None:
        conf = self.dir / "mosquitto.conf"
        with open(self.dir / "mosquitto-restarts.log", "a") as err:
            subprocess.run(["mosquitto", "-c", str(conf), "-d"], check=True, stderr=err)
        for _ in range(100):
            if port_open(self.mqtt_port):
                break
            time.sleep(0.05)
        else:
            raise RuntimeError("mosquitto did not come back")
        pids = subprocess.run(["pgrep", "-f", f"mosquitto -c {conf}"], stdout=subprocess.PIPE,
                              text=True).stdout.split()
        (self.dir / "mosquitto.pid").write_text((pids[0] if pids else "") + "\n")


# --------------------------------------------------------------------------------------------------
# PostgreSQL proxy that cuts the connection after the server committed, before the client saw it.
# Run as `faults.py proxy LISTEN TARGET LOGFILE`; each SIGUSR1 arms one cut.
# --------------------------------------------------------------------------------------------------
def proxy_main(listen_port: int, target_port: int, logfile: str) -> None:
    armed = 0
    conn_no = 0
    out = open(logfile, "a", buffering=1)

    def note(msg: str) -> None:
        out.write(f"{time.time():.3f} {msg}\n")

    def arm(*_: object) -> None:
        nonlocal armed
        armed += 1
        note(f"armed ({armed})")

    async def pump_client(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while data := await reader.read(65536):
                writer.write(data)
                await writer.drain()
        except (ConnectionError, OSError):
            pass
        finally:
            writer.close()

    async def handle(c_reader: asyncio.StreamReader, c_writer: asyncio.StreamWriter) -> None:
        nonlocal armed, conn_no
        conn_no += 1
        me = conn_no
        try:
            s_reader, s_writer = await asyncio.open_connection("127.0.0.1", target_port)
        except OSError as e:
            note(f"conn {me}: upstream refused: {e}")
            c_writer.close()
            return
        note(f"conn {me}: open")
        up = asyncio.ensure_future(pump_client(c_reader, s_writer))
        buf = b""
        cut = False
        try:
            while data := await s_reader.read(65536):
                buf += data
                send_upto = 0
                while len(buf) - send_upto >= 5:
                    length = int.from_bytes(buf[send_upto + 1:send_upto + 5], "big")
                    end = send_upto + 1 + length
                    if end > len(buf):
                        break
                    kind = buf[send_upto:send_upto + 1]
                    if armed > 0 and kind == b"C" and buf[send_upto + 5:end].startswith(b"COMMIT"):
                        cut = True
                        break
                    send_upto = end
                if send_upto:
                    c_writer.write(buf[:send_upto])
                    await c_writer.drain()
                    buf = buf[send_upto:]
                if cut:
                    armed -= 1
                    note(f"conn {me}: CUT after COMMIT (armed left {armed})")
                    break
        except (ConnectionError, OSError):
            pass
        finally:
            for w in (c_writer, s_writer):
                try:
                    if cut:
                        w.transport.abort()
                    else:
                        w.close()
                except Exception:
                    pass
            up.cancel()
            note(f"conn {me}: closed")

    async def main() -> None:
        loop = asyncio.get_running_loop()
        loop.add_signal_handler(signal.SIGUSR1, arm)
        server = await asyncio.start_server(handle, "127.0.0.1", listen_port)
        note(f"listening on {listen_port} -> {target_port}")
        async with server:
            await server.serve_forever()

    asyncio.run(main())


# --------------------------------------------------------------------------------------------------
# The aggregator under test.
# --------------------------------------------------------------------------------------------------
class Aggregator:
    def __init__(self, binary: Path, site: Path, mqtt_url: str, db_url: str, prefix: str, client_id: str,
                 logfile: Path, extra: list[str] | None = None) -> None:
        self.cmd = [str(binary), "--site", str(site), "--broker", mqtt_url, "--database", db_url,
                    "--metrics-port", "0",
                    "--set", f"topic_prefix={prefix}", "--set", f"mqtt.client_id={client_id}",
                    "--set", "raw_sightings.enabled=true"] + (extra or [])
        self.logfile = logfile
        self.proc: subprocess.Popen | None = None
        self.starts = 0
        self.exits: list[tuple[str, int | None]] = []

    def start(self, timeout: float = 60) -> None:
        offset = self.logfile.stat().st_size if self.logfile.exists() else 0
        with open(self.logfile, "a") as f:
            f.write(f"===== faults: start #{self.starts + 1} at {time.strftime('%H:%M:%S')}\n")
            f.flush()
            self.proc = subprocess.Popen(self.cmd, stdout=f, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
        self.starts += 1
        deadline = time.time() + timeout
        while time.time() < deadline:
            with open(self.logfile, "rb") as f:
                f.seek(offset)
                if b"connected to the broker" in f.read():
                    return
            if self.proc.poll() is not None:
                raise RuntimeError(f"aggregator exited with {self.proc.returncode} at start; see {self.logfile}")
            time.sleep(0.05)
        raise RuntimeError(f"aggregator not connected after {timeout} s; see {self.logfile}")

    def stop(self, sig: int, timeout: float = 60) -> int | None:
        if self.proc is None:
            return None
        self.proc.send_signal(sig)
        try:
            rc = self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            rc = self.proc.wait()
            self.exits.append((f"{signal.Signals(sig).name} (did not exit in {timeout:.0f} s: SIGKILL)", rc))
            self.proc = None
            return rc
        self.exits.append((signal.Signals(sig).name, rc))
        self.proc = None
        return rc

    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None


# --------------------------------------------------------------------------------------------------
# One run.
# --------------------------------------------------------------------------------------------------
@dataclass
class RunResult:
    name: str
    start: int = 0
    wall_s: float = 0.0
    sim: dict = field(default_factory=dict)
    sim_rc: int | None = None
    expected_batches: int = 0
    expected_rows: int = 0
    stored_batches: int = 0
    lost_batches: int = 0
    unexpected_batches: int = 0
    dup_batches: int = 0
    sighting_rows: int = 0
    dup_rows: int = 0
    lost_rows: int = 0
    rollups_exact: bool = False
    rollup_notes: list = field(default_factory=list)
    progress_exact: bool = False
    derived: dict = field(default_factory=dict)     # table -> Counter of tuples
    unknown_events: int = 0
    faults_done: list = field(default_factory=list)
    agg_exits: list = field(default_factory=list)
    log_summary: list = field(default_factory=list)
    error_lines: int = 0
    warning_lines: int = 0
    notes: list = field(default_factory=list)


SIM_SUMMARY = re.compile(
    r"(\d+) sightings in (\d+) batches published in ([\d.]+) s; acked (\d+), re-sent (\d+), dropped (\d+), "
    r"unacked at the end (\d+)")


class Suite:
    def __init__(self, args: argparse.Namespace) -> None:
        self.args = args
        self.plan = PLANS["short" if args.short else "full"]
        self.svc = Services()
        self.work = Path(args.workdir)
        self.bin = self.work / "bin"
        self.site = self.bin / "museum.yaml"
        self.schema = self.bin / "schema"
        self.tag = f"{os.getpid()}"
        self.results: dict[str, RunResult] = {}

    def prepare(self) -> None:
        self.bin.mkdir(parents=True, exist_ok=True)
        source = (ROOT / self.args.bin) if not Path(self.args.bin).is_absolute() else Path(self.args.bin)
        agg = source / "waymark-aggregator"
        git = lambda *a: subprocess.run(["git", "-C", str(ROOT), *a], stdout=subprocess.PIPE,
                                        stderr=subprocess.DEVNULL, text=True).stdout.strip()
        dirty = git("status", "--porcelain", "--untracked-files=no", "--", "Sources", "Package.swift")
        self.provenance = (f"binaries: {self.args.bin} of git {git('log', '-1', '--format=%h') or '?'}"
                           + (" (working tree had uncommitted Sources changes)" if dirty else "")
                           + (" (NB: that commit is newer than the binaries: they were built from an earlier tree)"
                              if agg.exists() and int(git("log", "-1", "--format=%ct") or 0) > agg.stat().st_mtime else "")
                           + f", waymark-aggregator built {time.strftime('%Y-%m-%d %H:%M', time.gmtime(agg.stat().st_mtime))} UTC"
                           if agg.exists() else "")
        for b in ("waymark", "waymark-aggregator"):
            src = source / b
            if not src.exists():
                raise SystemExit(f"{src} missing: swift build -c release --product waymark && swift build -c release --product waymark-aggregator")
            shutil.copy2(src, self.bin / b)
        # The museum site, with journeys ending after JOURNEY_TIMEOUT_S outside every region instead
        # of 600 s, so that a 5- or 15-minute input ends journeys and the journeys table is compared.
        text = (ROOT / "deploy" / "examples" / "museum.yaml").read_text()
        text, n = re.subn(r"(?m)^(\s+journey_timeout_s:)\s*\d+(\.\d+)?", rf"\g<1> {JOURNEY_TIMEOUT_S}", text)
        if n != 1:
            raise SystemExit("museum.yaml: fusion.journey_timeout_s not found")
        self.site.write_text(text)
        shutil.copytree(ROOT / "schema", self.schema, dirs_exist_ok=True)

    # ---------------------------------------------------------------------------------------------
    def run(self, name: str) -> RunResult:
        plan = self.plan
        res = RunResult(name)
        rd = self.work / name
        rd.mkdir(parents=True, exist_ok=True)
        db = "faults_" + re.sub(r"[^a-z0-9]", "_", name)
        self.svc.psql("postgres", f"DROP DATABASE IF EXISTS {db}")
        self.svc.psql("postgres", f"CREATE DATABASE {db} OWNER waymark")
        subprocess.run([str(self.bin / "waymark"), "db", "migrate", "--database", self.svc.db_url(db),
                        "--schema", str(self.schema)], check=True, stdout=subprocess.DEVNULL)
        durable = name == "pgstop-durable"
        self.svc.pg_set_durable(durable)
        res.notes.append(f"PostgreSQL fsync={self.svc.psql('postgres', 'SHOW fsync').strip()}, "
                         f"synchronous_commit={self.svc.psql('postgres', 'SHOW synchronous_commit').strip()}")

        proxy = None
        agg_db_url = self.svc.db_url(db)
        if name == "cut":
            pport = free_port()
            proxy_log = rd / "proxy.log"
            proxy = subprocess.Popen([sys.executable, __file__, "proxy", str(pport), str(self.svc.pg_port),
                                      str(proxy_log)])
            for _ in range(100):
                if port_open(pport):
                    break
                time.sleep(0.05)
            agg_db_url = self.svc.db_url(db, pport, "?sslmode=disable&gssencmode=disable")

        prefix = f"waymark/v1/faults-{self.tag}-{name}"
        if sharded(name):
            aggs = [Aggregator(self.bin / "waymark-aggregator", self.site, self.svc.mqtt_url, agg_db_url, prefix,
                               f"faults-{self.tag}-{name}-{k}", rd / f"aggregator-{k}.log",
                               ["--set", f"shards.count={SHARDS}", "--set", f"shards.own={k}"]) for k in range(SHARDS)]
        else:
            aggs = [Aggregator(self.bin / "waymark-aggregator", self.site, self.svc.mqtt_url, agg_db_url, prefix,
                               f"faults-{self.tag}-{name}", rd / "aggregator.log")]
        agg = aggs[-1]  # the one faults hit (shard 1's when sharded)
        began = time.time()
        sim = None
        try:
            for a in aggs:
                a.start()
            dur = plan["duration_s"]
            speed = plan["speedup"]
            res.start = int(math.floor(time.time()) - dur * (1 - 1 / speed))
            sim_log = rd / "simulate.log"
            with open(sim_log, "w") as f:
                sim = subprocess.Popen(
                    [str(self.bin / "waymark"), "simulate", "--site", str(self.site),
                     "--devices", str(plan["devices"]), "--duration", plan["duration"], "--seed", str(plan["seed"]),
                     "--publish", self.svc.mqtt_url, "--speedup", str(speed), "--start", str(res.start),
                     "--topic-prefix", prefix, "--resend-after", str(RESEND_AFTER_S),
                     "--ack-wait", str(ACK_WAIT_S)] + (["--shards", str(SHARDS)] if sharded(name) else []),
                    stdout=f, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
            t0 = self.wait_for(sim_log, b"simulate: publishing", sim, 60)
            wall = dur / speed
            self.inject(name.removesuffix("-shards"), agg, t0, wall, res, rd, proxy, sim)
            try:
                res.sim_rc = sim.wait(timeout=wall + ACK_WAIT_S + 120)
            except subprocess.TimeoutExpired:
                sim.kill()
                res.sim_rc = sim.wait()
                res.notes.append("simulator did not finish in time (killed)")
            text = sim_log.read_text(errors="replace")
            m = None
            for m in SIM_SUMMARY.finditer(text):
                pass
            if m:
                res.sim = dict(sightings=int(m[1]), published=int(m[2]), seconds=float(m[3]), acked=int(m[4]),
                               resent=int(m[5]), dropped=int(m[6]), unacked=int(m[7]))
            else:
                res.notes.append(f"simulator summary not found (exit {res.sim_rc})")
            for k, a in enumerate(aggs):
                if a.alive():
                    a.stop(signal.SIGTERM)
                else:
                    res.notes.append(f"aggregator{f' of shard {k}' if len(aggs) > 1 else ''} was not running at the end of the run")
        finally:
            if sim is not None and sim.poll() is None:
                sim.kill()
                sim.wait()
            for a in aggs:
                if a.alive():
                    a.stop(signal.SIGKILL)
            if proxy is not None:
                proxy.terminate()
                proxy.wait()
        res.wall_s = time.time() - began
        res.agg_exits = [e for a in aggs for e in a.exits]
        self.svc.pg_set_durable(False)
        self.collect(res, db, rd, shards=SHARDS if sharded(name) else 1)
        for a in aggs:
            self.summarize_log(res, a.logfile)
        return res

    @staticmethod
    def wait_for(path: Path, needle: bytes, proc: subprocess.Popen, timeout: float) -> float:
        deadline = time.time() + timeout
        while time.time() < deadline:
            if needle in path.read_bytes():
                return time.time()
            if proc.poll() is not None:
                raise RuntimeError(f"{proc.args[0]} exited ({proc.returncode}); see {path}")
            time.sleep(0.02)
        raise RuntimeError(f"'{needle.decode()}' not seen in {path}")

    # ---------------------------------------------------------------------------------------------
    def inject(self, name: str, agg: Aggregator, t0: float, wall: float, res: RunResult, rd: Path,
               proxy: subprocess.Popen | None, sim: subprocess.Popen | None = None) -> None:
        plan = self.plan
        count = {"baseline": 0, "none": 0, "sigterm": plan["term"], "sigkill": plan["kill"], "broker": plan["broker"],
                 "sigterm-idle": plan["term"], "sigkill-idle": plan["kill"],
                 "pgstop": plan["pgstop"], "pgstop-durable": plan["pgstop"], "cut": plan["cut"]}[name]
        for i in range(count):
            at = t0 + wall * (i + 1) / (count + 1)
            while (left := at - time.time()) > 0:
                time.sleep(min(0.05, left))
            rel = time.time() - t0
            if name in ("sigterm-idle", "sigkill-idle"):
                assert sim is not None
                sig = signal.SIGTERM if name == "sigterm-idle" else signal.SIGKILL
                sim.send_signal(signal.SIGSTOP)
                time.sleep(IDLE_SETTLE_S)  # what was published is fused and committed (flush every 1 s)
                rc = agg.stop(sig)
                time.sleep(RESTART_PAUSE_S)
                agg.start()
                sim.send_signal(signal.SIGCONT)
                res.faults_done.append(f"simulator paused at +{rel:.1f} s, {sig.name} {IDLE_SETTLE_S:g} s later "
                                       f"(exit {rc}), restarted, simulator resumed after {time.time() - t0 - rel:.1f} s")
            elif name in ("sigterm", "sigkill"):
                sig = signal.SIGTERM if name == "sigterm" else signal.SIGKILL
                t = time.time()
                rc = agg.stop(sig)
                stopped = time.time() - t
                time.sleep(RESTART_PAUSE_S)
                t = time.time()
                agg.start()
                res.faults_done.append(f"{sig.name} at +{rel:.1f} s (exit {rc} after {stopped:.1f} s, "
                                       f"connected again {time.time() - t:.1f} s after restart)")
            elif name == "broker":
                self.svc.mosquitto_kill()
                time.sleep(BROKER_DOWN_S)
                self.svc.mosquitto_start()
                res.faults_done.append(f"Mosquitto SIGKILL at +{rel:.1f} s, restarted after {BROKER_DOWN_S:.0f} s")
            elif name.startswith("pgstop"):
                self.svc.pg_stop("immediate")
                time.sleep(PG_DOWN_S)
                t = time.time()
                self.svc.pg_start()
                res.faults_done.append(f"pg_ctl stop -m immediate at +{rel:.1f} s, up again after "
                                       f"{PG_DOWN_S + time.time() - t:.1f} s")
            elif name == "cut":
                assert proxy is not None
                plog = rd / "proxy.log"
                before = plog.read_text().count("CUT after COMMIT")
                proxy.send_signal(signal.SIGUSR1)
                deadline = time.time() + 30
                while time.time() < deadline and plog.read_text().count("CUT after COMMIT") == before:
                    time.sleep(0.02)
                done = plog.read_text().count("CUT after COMMIT") > before
                res.faults_done.append(f"cut armed at +{rel:.1f} s: " + (
                    f"connection cut after COMMIT {time.time() - t0 - rel:.2f} s later" if done else "NO COMMIT seen in 30 s"))
            # An aggregator that died of the fault is restarted (its supervisor would do that).
            if not agg.alive():
                rc = agg.proc.returncode if agg.proc else None
                res.faults_done.append(f"aggregator had exited ({rc}) after the fault; restarted")
                agg.exits.append(("died", rc))
                time.sleep(RESTART_PAUSE_S)
                agg.start()
            log(f"{name}: {res.faults_done[-1]}")

    # ---------------------------------------------------------------------------------------------
    def expected(self, start: int, rd: Path, shards: int = 1) -> tuple[dict, dict]:
        """The batches the simulator published in this run, generated offline (same seed, same start):
        {(gateway, boot, shard, seq): [device, ...]} and per gateway (batches, sightings). With shards
        each window's batch is split as the simulator splits it: one batch per shard (empty ones
        too), numbered per (gateway, boot, shard) from 1 in window order."""
        plan = self.plan
        out = rd / "expected-batches.jsonl"
        # Not /dev/null: the simulator creates its output file by replacing whatever is at the path
        # (FileManager.createFile writes a temporary file and renames it), which as root replaces
        # the device node /dev/null with a regular file.
        scratch = rd / "expected-sightings.jsonl"
        subprocess.run([str(self.bin / "waymark"), "simulate", "--site", str(self.site),
                        "--devices", str(plan["devices"]), "--duration", plan["duration"], "--seed", str(plan["seed"]),
                        "--start", str(start), "--sightings", str(scratch), "--batches", str(out), "--quiet"],
                       check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        scratch.unlink()
        import json
        batches: dict = {}
        per_gw: dict = collections.defaultdict(lambda: [0, 0])
        windows = []
        with open(out) as f:
            for line in f:
                windows.append(json.loads(line))
        if shards > 1:
            windows.sort(key=lambda b: (b["gateway"], float(b["end"])))
        next_seq: dict = collections.defaultdict(lambda: 1)
        for b in windows:
            devices = [e["device"] for e in b["sightings"]]
            if shards == 1:
                batches[(b["gateway"], b["boot"], "0", int(b["seq"]))] = devices
            else:
                for k in range(shards):
                    stream = (b["gateway"], b["boot"], str(k))
                    batches[(*stream, next_seq[stream])] = [d for d in devices if shard_of(d, shards) == k]
                    next_seq[stream] += 1
            per_gw[b["gateway"]][0] += shards
            per_gw[b["gateway"]][1] += len(devices)
        if not self.args.keep:
            out.unlink()
        return batches, dict(per_gw)

    def rows(self, db: str, sql: str) -> list[tuple]:
        text = self.svc.psql(db, sql, user="waymark")
        return [tuple(line.split("\t")) for line in text.splitlines()]

    def collect(self, res: RunResult, db: str, rd: Path, shards: int = 1) -> None:
        expected, per_gw = self.expected(res.start, rd, shards)
        res.expected_batches = len(expected)
        res.expected_rows = sum(len(v) for v in expected.values())
        s = res.start

        def rel(col: str) -> str:
            return f"round((extract(epoch FROM {col}) - {s})::numeric, 3)"

        # Raw sightings: (gateway, boot, shard, seq, device, first_at).
        raw = self.rows(db, f"SELECT gateway_id, boot, shard, seq, device_id, {rel('first_at')} FROM sightings")
        res.sighting_rows = len(raw)
        full = collections.Counter(raw)
        res.dup_rows = sum(c - 1 for c in full.values())
        per_batch = collections.Counter()
        stored_dev = set()
        for gw, boot, shard, seq, dev, _ in full:
            stored_dev.add((gw, boot, shard, int(seq), dev))
        for gw, boot, shard, seq, dev, _ in raw:
            per_batch[(gw, boot, shard, int(seq))] += 1
        res.stored_batches = len(per_batch)
        # Batches without sightings (empty shards) leave no raw rows: the marks below cover them.
        res.lost_batches = sum(1 for k, devs in expected.items() if devs and k not in per_batch)
        res.unexpected_batches = sum(1 for k in per_batch if k not in expected)
        res.dup_batches = sum(1 for k, n in per_batch.items() if k in expected and n > len(expected[k]))
        exp_dev = {(k[0], k[1], k[2], k[3], d) for k, devs in expected.items() for d in devs}
        res.lost_rows = len(exp_dev - stored_dev)
        if res.unexpected_batches:
            res.notes.append(f"{res.unexpected_batches} stored batches the simulator never generated")

        # Ingest rollups, summed per gateway over the hours (the hour is of receive time).
        roll = {gw: (int(b), int(n)) for gw, b, n in self.rows(
            db, "SELECT gateway_id, sum(batches), sum(sightings) FROM gateway_ingest_hourly GROUP BY 1")}
        bad = []
        for gw in sorted(set(roll) | set(per_gw)):
            want = tuple(per_gw.get(gw, (0, 0)))
            got = roll.get(gw, (0, 0))
            if want != got:
                bad.append(f"{gw} {got[0]}/{got[1]} vs {want[0]}/{want[1]}")
        res.rollups_exact = not bad
        if bad:
            res.rollup_notes = bad
            tb = sum(v[0] for v in roll.values())
            ts = sum(v[1] for v in roll.values())
            res.notes.append(f"ingest rollups: {len(bad)} gateways off; totals batches {tb} (want "
                             f"{res.expected_batches}), sightings {ts} (want {res.expected_rows}); e.g. "
                             + "; ".join(bad[:3]))
        # High-water marks.
        marks = {(gw, boot, shard): int(seq)
                 for gw, boot, shard, seq in self.rows(db, "SELECT gateway_id, boot, shard, seq FROM gateway_progress")}
        want_marks: dict = {}
        for gw, boot, shard, seq in expected:
            want_marks[(gw, boot, shard)] = max(want_marks.get((gw, boot, shard), 0), seq)
        res.progress_exact = marks == want_marks
        if not res.progress_exact:
            behind = sum(1 for k, v in want_marks.items() if marks.get(k, 0) < v)
            res.notes.append(f"gateway_progress: {behind} (gateway, boot, shard) marks below the last batch")

        # Derived rows, times relative to the run's start, surrogate ids left out.
        q = {
            "region_events": f"SELECT device_id, {rel('at')}, kind, coalesce(region_id, ''), coalesce(proximity, ''), "
                             f"coalesce(round(distance_m::numeric, 2)::text, '') FROM region_events",
            "visits": f"SELECT device_id, region_id, {rel('entered_at')}, {rel('exited_at')}, "
                      f"round(dwell_s::numeric, 3), inferred FROM visits",
            "transitions": f"SELECT device_id, from_region, to_region, {rel('at')}, inferred FROM transitions",
            "journeys": f"SELECT device_id, {rel('started_at')}, {rel('ended_at')}, round(duration_s::numeric, 3), "
                        f"regions::text FROM journeys",
        }
        for t, sql in q.items():
            res.derived[t] = collections.Counter(self.rows(db, sql))
        res.unknown_events = sum(n for r, n in res.derived["region_events"].items() if r[2] == "unknown")

    def summarize_log(self, res: RunResult, path: Path) -> None:
        if not path.exists():
            return
        msgs: collections.Counter = collections.Counter()
        for line in path.read_text(errors="replace").splitlines():
            low = line.lower()
            lvl = None
            if re.search(r"\b(critical|error)\b", low):
                lvl = "error"
                res.error_lines += 1
            elif re.search(r"\bwarning\b", low):
                lvl = "warning"
                res.warning_lines += 1
            if lvl:
                norm = re.sub(r"^\S+\s+\S*\s*", "", line) if re.match(r"^\d{4}-", line) else line
                norm = re.sub(r"\d+(\.\d+)?", "N", norm)
                msgs[norm[:220]] += 1
        res.log_summary = msgs.most_common(8)


# --------------------------------------------------------------------------------------------------
# Report.
# --------------------------------------------------------------------------------------------------
def compare(run: collections.Counter, base: collections.Counter) -> tuple[int, int, int, float]:
    common = sum((run & base).values())
    nr, nb = sum(run.values()), sum(base.values())
    pct = 100.0 if max(nr, nb) == 0 else 100.0 * common / max(nr, nb)
    return nr, nb, common, pct


NUMBER = re.compile(r"-?\d+(\.\d+)?")


def write_diffs(run: RunResult, base: RunResult, rd: Path) -> None:
    """rd/diff-<table>.txt: rows only in the baseline (-) and only in this run (+), in order."""
    for t in DERIVED:
        r, b = run.derived.get(t, collections.Counter()), base.derived.get(t, collections.Counter())
        only = [("-", row) for row in (b - r).elements()] + [("+", row) for row in (r - b).elements()]
        only.sort(key=lambda x: ([(0, float(v), "") if NUMBER.fullmatch(v) else (1, 0.0, v) for v in x[1]], x[0]))
        with open(rd / f"diff-{t}.txt", "w") as f:
            f.write(f"# {t}: - only in the baseline, + only in {run.name}; times relative to the run's start\n")
            for sign, row in only:
                f.write(sign + " " + "\t".join(row) + "\n")


def baseline_of(name: str) -> str:
    return "baseline-shards" if sharded(name) else "baseline"


def report(results: dict[str, RunResult], plan_name: str, plan: dict) -> tuple[str, list[str]]:
    failures: list[str] = []
    known: list[str] = []
    lines = [
        f"Fault-injection suite ({plan_name}: {plan['duration']} simulated at {plan['speedup']:g}x, "
        f"{plan['devices']} devices, seed {plan['seed']}, museum site with journey_timeout_s {JOURNEY_TIMEOUT_S}; "
        f"resend after {RESEND_AFTER_S} s)",
        "",
        "| fault | batches published / stored (lost, duplicated) | sighting rows (dup) | ingest rollups exact? "
        "| visits (common, %) | region events (common, %) | transitions (common, %) | journeys (common, %) "
        "| unknown events | resends per batch |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for name, r in results.items():
        base = results[baseline_of(name)]
        is_base = name == baseline_of(name)
        pub = r.sim.get("published", "?")
        resent = r.sim.get("resent")
        rpb = (resent / r.sim["published"]) if r.sim.get("published") else float("nan")
        cells = [name,
                 f"{pub} / {r.stored_batches} ({r.lost_batches}, {r.dup_batches})",
                 f"{r.sighting_rows} ({r.dup_rows})" + (f", {r.lost_rows} lost" if r.lost_rows else ""),
                 "yes" if r.rollups_exact else "**no**"]
        for t in DERIVED:
            nr, nb, common, pct = compare(r.derived.get(t, collections.Counter()), base.derived.get(t, collections.Counter()))
            if is_base:
                cells.append(f"{nr} (base)")
            else:
                cells.append(f"{nr}/{nb} ({common}, {pct:.2f} %)")
        cells.append(f"{r.unknown_events}" + ("" if is_base else f" (base {base.unknown_events})"))
        cells.append(f"{rpb:.3f} ({resent}/{pub})" if resent is not None else "?")
        lines.append("| " + " | ".join(cells) + " |")

        # Checks.
        def fail(what: str) -> None:
            failures.append(f"{name}: {what}")

        def gap(what: str) -> None:
            known.append(f"{name}: {what}")
        if r.lost_batches > MAX_LOST_BATCHES:
            fail(f"{r.lost_batches} batches lost (max {MAX_LOST_BATCHES})")
        if r.dup_batches > MAX_DUPLICATED_BATCHES:
            fail(f"{r.dup_batches} batches duplicated (max {MAX_DUPLICATED_BATCHES})")
        if r.lost_rows > MAX_LOST_SIGHTING_ROWS:
            fail(f"{r.lost_rows} sighting rows lost (max {MAX_LOST_SIGHTING_ROWS})")
        if r.dup_rows > MAX_DUPLICATED_SIGHTING_ROWS:
            fail(f"{r.dup_rows} sighting rows duplicated (max {MAX_DUPLICATED_SIGHTING_ROWS})")
        if REQUIRE_EXACT_ROLLUPS and not r.rollups_exact:
            fail("ingest rollups not exact")
        if REQUIRE_ALL_ACKED and (not r.sim or r.sim.get("unacked", 1) > 0):
            fail(f"simulator: {r.sim.get('unacked', '?')} batches unacked at the end (exit {r.sim_rc})")
        if not is_base:
            floor_pct = MIN_IDENTICAL_PCT_IDLE if name in IDLE_FAULTS else MIN_IDENTICAL_PCT_OTHER
            for t in DERIVED:
                _, _, _, pct = compare(r.derived.get(t, collections.Counter()), base.derived.get(t, collections.Counter()))
                if pct < floor_pct:
                    (gap if name in KNOWN_GAPS else fail)(f"{t} {pct:.2f} % identical to the baseline (min {floor_pct:g} %)")
        if name in RESEND_CHECKED_FAULTS and not (rpb <= MAX_RESENDS_PER_BATCH):
            fail(f"resends per batch {rpb:.3f} (max {MAX_RESENDS_PER_BATCH})")

    lines += ["", "Per run:"]
    for name, r in results.items():
        s = r.sim
        lines.append(f"- **{name}** ({r.wall_s:.0f} s wall): generated {r.expected_batches} batches / "
                     f"{r.expected_rows} sighting rows; simulator published {s.get('published', '?')}, "
                     f"acked {s.get('acked', '?')}, re-sent {s.get('resent', '?')}, unacked {s.get('unacked', '?')} "
                     f"(exit {r.sim_rc}); gateway_progress exact: {'yes' if r.progress_exact else 'no'}; "
                     f"aggregator log: {r.error_lines} error, {r.warning_lines} warning lines")
        for f_ in r.faults_done:
            lines.append(f"  - {f_}")
        odd = [f"{how} → exit {rc}" for how, rc in r.agg_exits
               if not ((how == "SIGTERM" and rc == 0) or (how == "SIGKILL" and rc == -9))]
        if odd:
            lines.append("  - unexpected aggregator exits: " + ", ".join(odd))
        for n in r.notes:
            lines.append(f"  - {n}")
        for msg, n in r.log_summary:
            lines.append(f"  - log ×{n}: `{msg.replace('`', chr(39))}`")
    lines.append("")
    thresholds = (f"Thresholds: lost/duplicated batches ≤ {MAX_LOST_BATCHES}/{MAX_DUPLICATED_BATCHES}, lost/duplicated "
                  f"sighting rows ≤ {MAX_LOST_SIGHTING_ROWS}/{MAX_DUPLICATED_SIGHTING_ROWS}, rollups exact, "
                  f"all acked; derived rows ≥ {MIN_IDENTICAL_PCT_IDLE:g} % identical for {', '.join(IDLE_FAULTS)}, "
                  f"≥ {MIN_IDENTICAL_PCT_OTHER:g} % otherwise; resends per batch ≤ {MAX_RESENDS_PER_BATCH} for "
                  f"{', '.join(RESEND_CHECKED_FAULTS)}.")
    lines.append(thresholds)
    if known:
        lines.append("")
        lines.append(f"Known gaps, reported but not failing (--known-gap; docs/aggregator.md \"Faults\") ({len(known)}):")
        lines += [f"- {k}" for k in known]
    if failures:
        lines.append("")
        lines.append(f"FAILED checks ({len(failures)}):")
        lines += [f"- {f_}" for f_ in failures]
    else:
        lines.append("")
        lines.append("All checks passed.")
    return "\n".join(lines) + "\n", failures


def main() -> int:
    if len(sys.argv) > 1 and sys.argv[1] == "proxy":
        proxy_main(int(sys.argv[2]), int(sys.argv[3]), sys.argv[4])
        return 0
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--short", action="store_true", help="the CI form: 5 simulated minutes, fewer repetitions")
    ap.add_argument("--only", default="", help=f"comma-separated faults out of {','.join(FAULTS)} (the baseline always runs)")
    ap.add_argument("--keep", action="store_true", help="keep generated files")
    ap.add_argument("--report-only", action="store_true", help="print the table, exit 0 even when checks fail")
    ap.add_argument("--workdir", required=True)
    ap.add_argument("--known-gap", default="", help="comma-separated runs whose derived-row shortfall is reported, not failed")
    ap.add_argument("--bin", default=".build/release", help="folder with the waymark and waymark-aggregator binaries")
    ap.add_argument("--report", help="also write the report (Markdown) to this file")
    args = ap.parse_args()
    KNOWN_GAPS.update(f for f in args.known_gap.split(",") if f)
    faults = [f for f in args.only.split(",") if f] or list(FAULTS)
    unknown = [f for f in faults if f not in FAULTS]
    if unknown:
        ap.error(f"unknown faults {unknown}; choose from {','.join(FAULTS)}")

    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # run the finally blocks: stop what we started
    suite = Suite(args)
    suite.prepare()
    began = time.time()
    runs = ["baseline", *[f for f in faults if not sharded(f)]]
    if any(sharded(f) for f in faults):
        runs += ["baseline-shards", *[f for f in faults if sharded(f)]]
    for name in runs:
        log(f"run {name} …")
        r = suite.run(name)
        suite.results[name] = r
        if name != baseline_of(name):
            write_diffs(r, suite.results[baseline_of(name)], suite.work / name)
        log(f"run {name}: {r.wall_s:.0f} s, published {r.sim.get('published')}, stored {r.stored_batches} batches, "
            f"lost {r.lost_batches}, dup rows {r.dup_rows}")
    plan_name = "short" if args.short else "full"
    text, failures = report(suite.results, plan_name, suite.plan)
    text = (f"Measured {time.strftime('%Y-%m-%d %H:%M', time.gmtime(began))} UTC; {suite.provenance}.\n\n" + text)
    text += f"\nSuite wall time: {time.time() - began:.0f} s.\n"
    if args.report_only and failures:
        text += f"\nREPORT ONLY: {len(failures)} checks failed (listed above); exit status 0 regardless.\n"
    print(text)
    if args.report:
        Path(args.report).write_text(text)
    return 0 if (args.report_only or not failures) else 1


if __name__ == "__main__":
    sys.exit(main())
