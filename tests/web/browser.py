#!/usr/bin/env python3
"""Drive headless Chromium through chromedriver (the W3C WebDriver protocol over HTTP, from the
standard library) on a running dashboard: every panel must receive data in the browser itself
(point counts grow between two looks, values in plausible ranges), the CNP panel must see CNPs,
the parameter-change mark must be on the charts, and a screenshot is saved once the charts hold
data (a picture taken at the load event, before the page's own requests are answered, is blank).

usage: browser.py URL OUT.png [--marks N] [--wait S] [--static] [--size WxH (1400x1700)]
--static: a finished run (the page's data need not grow, only be there and in range).
exit 0: all checks passed; 1: a check failed; 77: no chromedriver (skip)."""
import base64
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request

# Plausible ranges per panel of the demo (values outside fail; None: no bound).
RANGES = {'tput': (0, 200), 'rc': (0, 400), 'rt': (0, 400), 'alpha': (0, 1), 'cnp': (0, 1e7),
          'queue': (0, 1 << 20), 'retx': (0, 1e8), 'rtt': (0, 1e4)}

# What the page holds, read in its own realm: per panel, per series, the non-null points and
# their range; the marks; the samples seen.
PROBE = """
const out = {samples: state.lastSeq, marks: state.marks.length, panels: {}};
for (const pan of state.panels) {
  const series = [];
  for (let k = 1; k < pan.data.length; k++) {
    const v = pan.data[k].filter(x => x != null && isFinite(x));
    series.push({label: pan.u.series[k].label, n: v.length,
                 min: v.length ? Math.min(...v) : null, max: v.length ? Math.max(...v) : null});
  }
  out.panels[pan.def.id] = series;
}
return out;
"""


def free_port():
    with socket.socket() as s:
        s.bind(('127.0.0.1', 0))
        return s.getsockname()[1]


class Driver:
    def __init__(self, port):
        self.base = 'http://127.0.0.1:%d' % port
        self.sid = None

    def call(self, method, path, body=None, timeout=60):
        data = json.dumps(body).encode() if body is not None else None
        req = urllib.request.Request(self.base + path, data=data, method=method,
                                     headers={'Content-Type': 'application/json'})
        try:
            with urllib.request.urlopen(req, timeout=timeout) as r:
                return json.loads(r.read() or b'{}').get('value')
        except urllib.error.HTTPError as e:
            raise RuntimeError('%s %s: %s' % (method, path, e.read()[:300].decode(errors='replace')))

    def session(self, profile, size):
        args = ['--headless=new', '--no-sandbox', '--disable-gpu', '--hide-scrollbars',
                '--window-size=' + size.replace('x', ','), '--user-data-dir=' + profile]
        caps = {'capabilities': {'alwaysMatch': {'browserName': 'chrome', 'goog:chromeOptions': {
            'binary': shutil.which('chromium') or shutil.which('chromium-browser'), 'args': args}}}}
        self.sid = self.call('POST', '/session', caps, timeout=120)['sessionId']

    def s(self, method, path, body=None):
        return self.call(method, '/session/%s%s' % (self.sid, path), body)

    def probe(self):
        return self.s('POST', '/execute/sync', {'script': PROBE, 'args': []})


def wait_for_driver(drv, proc):
    for _ in range(200):
        if proc.poll() is not None:
            return False
        try:
            if drv.call('GET', '/status', timeout=2).get('ready'):
                return True
        except (OSError, RuntimeError):
            pass
        time.sleep(0.05)
    return False


def wait_for_data(drv, deadline_s):
    """Until every panel holds points (the page has drawn /api/history and the stream)."""
    end = time.time() + deadline_s
    while True:
        p = drv.probe()
        if p['panels'] and all(any(s['n'] > 0 for s in ser) for ser in p['panels'].values()):
            return p
        if time.time() > end:
            return p
        time.sleep(0.25)


def check(first, second, marks, static):
    bad = []
    for pid, ser in second['panels'].items():
        before = {s['label']: s['n'] for s in first['panels'].get(pid, [])}
        grew = [s for s in ser if s['n'] > (0 if static else before.get(s['label'], 0))]
        if not grew:
            bad.append('%s: no series grew (%s)' % (pid, [(s['label'], s['n']) for s in ser]))
        lo, hi = RANGES.get(pid, (None, None))
        for s in ser:
            if s['n'] and ((lo is not None and s['min'] < lo) or (hi is not None and s['max'] > hi)):
                bad.append('%s/%s: values %g..%g outside %g..%g' % (pid, s['label'], s['min'],
                                                                    s['max'], lo, hi))
    cnp = second['panels'].get('cnp', [])
    if cnp and not any(s['n'] and s['max'] > 0 for s in cnp):
        bad.append('cnp: no CNP seen')
    if second['marks'] < marks:
        bad.append('marks: %d on the charts, expected %d' % (second['marks'], marks))
    if not static and second['samples'] <= first['samples']:
        bad.append('samples: %d then %d' % (first['samples'], second['samples']))
    return bad


def main():
    if len(sys.argv) < 3:
        print(__doc__)
        return 2
    url, out = sys.argv[1], sys.argv[2]
    marks = int(sys.argv[sys.argv.index('--marks') + 1]) if '--marks' in sys.argv else 0
    wait_s = float(sys.argv[sys.argv.index('--wait') + 1]) if '--wait' in sys.argv else 3
    exe = shutil.which('chromedriver')
    if not exe:
        print("SKIP: chromedriver not found (Debian package 'chromium-driver')")
        return 77
    port = free_port()
    tmp = tempfile.mkdtemp(prefix='feroce-browser-')
    proc = subprocess.Popen([exe, '--port=%d' % port], stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, env=dict(os.environ, HOME=tmp))
    drv = Driver(port)
    try:
        if not wait_for_driver(drv, proc):
            print('FAIL: chromedriver did not start')
            return 1
        size = sys.argv[sys.argv.index('--size') + 1] if '--size' in sys.argv else '1400x1700'
        drv.session(os.path.join(tmp, 'profile'), size)
        drv.s('POST', '/url', {'url': url})
        first = wait_for_data(drv, 60)
        time.sleep(wait_s)
        second = drv.probe()
        for pid, ser in second['panels'].items():
            print('browser: %-6s %s' % (pid, ', '.join('%s %d pts %s..%s' % (
                s['label'], s['n'], s['min'] if s['min'] is None else '%.3g' % s['min'],
                s['max'] if s['max'] is None else '%.3g' % s['max']) for s in ser)))
        print('browser: samples %d -> %d, marks %d' % (first['samples'], second['samples'],
                                                       second['marks']))
        with open(out, 'wb') as f:
            f.write(base64.b64decode(drv.s('GET', '/screenshot')))
        bad = check(first, second, marks, '--static' in sys.argv)
        for b in bad:
            print('FAIL: ' + b)
        return 1 if bad else 0
    finally:
        try:
            if drv.sid:
                drv.s('DELETE', '')
        except (OSError, RuntimeError):
            pass
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == '__main__':
    sys.exit(main())
