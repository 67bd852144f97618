#!/usr/bin/env python3
"""Gateway data-plane bench (issue 24): the latency HAProxy adds and the requests/s it sustains.

Starts REPLICAS replicas (tests/fixtures/replica/serve.py on their own ABACUS_PORT) and HAProxy
with the settings `abacus gateway` generates (src/gateway/haproxy_config.cc: retries,
redispatch, retry-on, health checks on /ready, roundrobin) and the replicas as servers, then:
  1. latency: N sequential keep-alive GETs straight to one replica, then through HAProxy;
     p50/p99 of each and the difference (what the gateway adds);
  2. throughput: THREADS keep-alive clients through HAProxy for SECONDS; requests/s and errors.
The client is Python (http.client), so requests/s is a lower bound set by the client and the
Python replicas as much as by HAProxy. Usage: bench/gateway_bench.py [N] [THREADS] [SECONDS]
"""
import http.client
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
REPLICA = os.path.join(ROOT, "tests", "fixtures", "replica", "serve.py")
HAPROXY = os.environ.get("HAPROXY", "/usr/sbin/haproxy")
REPLICAS = 4


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def wait_http(port, deadline=10):
    end = time.time() + deadline
    while time.time() < end:
        try:
            c = http.client.HTTPConnection("127.0.0.1", port, timeout=1)
            c.request("GET", "/ready")
            if c.getresponse().status == 200:
                return
        except OSError:
            time.sleep(0.05)
    raise SystemExit(f"nothing answers on {port}")


def config(listen, sock, servers):
    lines = [
        "global", f"  stats socket {sock} mode 600 level admin", "  maxconn 4096",
        "defaults", "  mode http", "  timeout connect 1s", "  timeout client 30s", "  timeout server 30s",
        "  timeout http-keep-alive 10s", "  retries 3", "  option redispatch 1",
        "  retry-on conn-failure empty-response response-timeout",
        "frontend gateway", f"  bind {listen}", "  default_backend svc_bench",
        "backend svc_bench", "  balance roundrobin", "  option httpchk GET /ready",
        "  default-server inter 1s fastinter 500ms fall 2 rise 1",
    ]
    lines += [f"  server r{i} 127.0.0.1:{p} weight 1 check" for i, p in enumerate(servers)]
    return "\n".join(lines) + "\n"


def latencies(port, n):
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
    out = []
    for _ in range(n):
        t = time.perf_counter()
        c.request("GET", "/")
        r = c.getresponse()
        r.read()
        out.append((time.perf_counter() - t) * 1000)
        if r.status != 200:
            raise SystemExit(f"HTTP {r.status} from {port}")
    return out


def pct(xs, p):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(len(xs) * p / 100))]


def throughput(port, threads, seconds):
    done, errors = [0] * threads, [0] * threads
    stop = time.time() + seconds

    def worker(i):
        c = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
        while time.time() < stop:
            try:
                c.request("GET", "/")
                r = c.getresponse()
                r.read()
                if r.status == 200:
                    done[i] += 1
                else:
                    errors[i] += 1
            except OSError:
                errors[i] += 1
                c = http.client.HTTPConnection("127.0.0.1", port, timeout=5)

    ts = [threading.Thread(target=worker, args=(i,)) for i in range(threads)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    return sum(done) / seconds, sum(errors)


def main():
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 2000
    threads = int(sys.argv[2]) if len(sys.argv) > 2 else 8
    seconds = float(sys.argv[3]) if len(sys.argv) > 3 else 5
    if not shutil.which(HAPROXY) and not os.path.exists(HAPROXY):
        raise SystemExit(f"{HAPROXY} is missing (Debian package haproxy)")
    tmp = tempfile.mkdtemp(prefix="abacus-gw-bench-")
    procs = []
    try:
        ports = [free_port() for _ in range(REPLICAS)]
        for p in ports:
            env = dict(os.environ, ABACUS_PORT=str(p), ABACUS_VERSION="v1")
            procs.append(subprocess.Popen([sys.executable, REPLICA], env=env))
        for p in ports:
            wait_http(p)
        gw = free_port()
        cfg = os.path.join(tmp, "haproxy.cfg")
        with open(cfg, "w") as f:
            f.write(config(f"127.0.0.1:{gw}", os.path.join(tmp, "admin.sock"), ports))
        procs.append(subprocess.Popen([HAPROXY, "-db", "-f", cfg], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
        wait_http(gw)
        time.sleep(1.5)  # the first health checks pass
        latencies(ports[0], 200)  # warm up
        latencies(gw, 200)
        direct = latencies(ports[0], n)
        via = latencies(gw, n)
        print(f"latency over {n} sequential keep-alive GETs (ms):")
        print(f"  direct to a replica   p50 {pct(direct, 50):.3f}  p99 {pct(direct, 99):.3f}")
        print(f"  through the gateway   p50 {pct(via, 50):.3f}  p99 {pct(via, 99):.3f}")
        print(f"  added by the gateway  p50 {pct(via, 50) - pct(direct, 50):.3f}  p99 {pct(via, 99) - pct(direct, 99):.3f}")
        rps, errors = throughput(gw, threads, seconds)
        print(f"throughput through the gateway: {rps:.0f} requests/s with {threads} clients for {seconds:.0f}s, "
              f"{errors} errors ({REPLICAS} python replicas; cores: {os.cpu_count()})")
        rps_direct, _ = throughput(ports[0], threads, seconds)
        print(f"  one replica directly: {rps_direct:.0f} requests/s (the replicas bound what the gateway can show)")
    finally:
        for p in procs:
            p.terminate()
        for p in procs:
            p.wait()
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
