// The feroce dashboard: the LST AdvCam firmware panels, fed by /api/stream (Server-Sent
// Events, one sample per event). Rates are derived here from the counters' differences.
'use strict';

const COLORS = ['#1f77b4', '#d62728', '#2ca02c', '#9467bd', '#ff7f0e', '#17becf', '#8c564b',
                '#e377c2'];
const MAX_POINTS = 20 * 600;  // 10 minutes at 20 samples/s
// Rates are taken over this many sample intervals (250 ms at 20 samples/s): software moves
// packets in bursts, and a 50 ms difference is mostly noise.
const SPAN = 5;
const state = {run: null, recent: [], lastSeq: 0, t: [], panels: [], paused: false,
               zoomed: false, winS: 30, shown: [], dirty: false};

// Each panel: its title, unit, and how to get one value per flow (or per extra series).
const PANELS = [
  {id: 'tput', title: 'Throughput per flow', unit: 'Gb/s', note: 'verified payload at the receiver, over 250 ms; dashed: the switch bottleneck',
   flow: (f, p, dt) => p ? (f.rx_bytes - p.rx_bytes) * 8 / dt / 1e9 : null,
   extra: [{label: 'bottleneck', color: '#444', dash: [6, 4], v: () => state.run.rate_bps / 1e9},
           {label: 'total', color: '#999', width: 2.4, v: (s, p, dt) => p ? s.flows.reduce((a, f, i) => a + (f.rx_bytes - p.flows[i].rx_bytes), 0) * 8 / dt / 1e9 : null}]},
  {id: 'rc', title: 'Rc: current rate', unit: 'Gb/s', note: 'DCQCN rate limiter of each sender QP',
   flow: f => f.rc_bps >= 0 ? f.rc_bps / 1e9 : null},
  {id: 'rt', title: 'Rt: target rate', unit: 'Gb/s', note: 'the rate DCQCN recovers towards',
   flow: f => f.rt_bps >= 0 ? f.rt_bps / 1e9 : null},
  {id: 'alpha', title: 'alpha', unit: 'ratio', note: 'DCQCN estimate of the share of marked packets',
   flow: f => f.alpha >= 0 ? f.alpha : null},
  {id: 'cnp', title: 'CNPs received per flow', unit: 'CNP/s', note: 'dashed: CE marks set by the switch',
   flow: (f, p, dt) => p ? (f.cnps_rx - p.cnps_rx) / dt : null,
   extra: [{label: 'CE marks', color: '#444', dash: [6, 4], v: (s, p, dt) => p ? (s.switch.marked - p.switch.marked) / dt : null}]},
  {id: 'queue', title: 'Bottleneck queue depth', unit: 'KiB', note: 'dashed: RED Kmin and Kmax',
   extra: [{label: 'queue', color: '#1f77b4', fill: 'rgba(31,119,180,0.12)', v: s => s.switch.q_bytes / 1024},
           {label: 'Kmin', color: '#2ca02c', dash: [6, 4], v: () => state.run.kmin_bytes / 1024},
           {label: 'Kmax', color: '#d62728', dash: [6, 4], v: () => state.run.kmax_bytes / 1024}]},
  {id: 'retx', title: 'Retransmissions per flow', unit: 'packets/s', note: 'Go-Back-N resends of each sender QP',
   flow: (f, p, dt) => p ? (f.retx_pkts - p.retx_pkts) / dt : null},
  {id: 'rtt', title: 'PSN-to-ACK latency', unit: 'ms', note: 'mean of the ACKs of the last 250 ms',
   flow: (f, p) => p && f.rtt_count > p.rtt_count ? (f.rtt_sum_ns - p.rtt_sum_ns) / (f.rtt_count - p.rtt_count) / 1e6 : null},
];

function el(tag, attrs, text) {
  const e = document.createElement(tag);
  Object.assign(e, attrs || {});
  if (text !== undefined) e.textContent = text;
  return e;
}

function fmtNum(v) {
  if (v == null) return '–';
  const a = Math.abs(v);
  return a >= 100 ? v.toFixed(0) : a >= 10 ? v.toFixed(1) : a >= 1 ? v.toFixed(2) : v.toFixed(3);
}

function makePanel(def, nFlows) {
  const box = el('section', {className: 'panel'});
  box.append(el('h2', {}, def.title + ' (' + def.unit + ')'), el('div', {className: 'note'}, def.note));
  document.getElementById('panels').append(box);
  const series = [{label: 'time', value: (u, v) => v == null ? '–' : v.toFixed(2) + ' s'}];
  const cols = [];
  if (def.flow)
    for (let i = 0; i < nFlows; i++) {
      series.push({label: 'flow ' + (i + 1), stroke: COLORS[i % COLORS.length], width: 1.6,
                   value: (u, v) => fmtNum(v), show: state.shown[i]});
      cols.push({flow: i});
    }
  for (const x of def.extra || []) {
    series.push({label: x.label, stroke: x.color, width: x.width || 1.4, dash: x.dash, fill: x.fill,
                 value: (u, v) => fmtNum(v)});
    cols.push({extra: x});
  }
  const opts = {
    width: Math.max(box.clientWidth - 20, 300), height: 200,
    series,
    scales: {x: {time: false}, y: {range: (u, min, max) => [Math.min(0, min), max > 0 ? max * 1.08 : 1]}},
    axes: [{label: 'time (s)', stroke: '#3c4556', grid: {stroke: '#eceff3'}},
           {label: def.unit, stroke: '#3c4556', grid: {stroke: '#eceff3'}, size: 60}],
    cursor: {sync: {key: 'feroce'}, drag: {x: true, y: false}},
    legend: {live: true},
    hooks: {setSelect: [u => { if (u.select.width > 2) { state.zoomed = true; updateStatus(); } }]},
  };
  const data = [state.t];
  for (let k = 0; k < cols.length; k++) data.push([]);
  const u = new uPlot(opts, data, box);
  u.over.addEventListener('dblclick', () => { state.zoomed = false; updateStatus(); redraw(); });
  return {def, u, cols, data};
}

function buildFlowPicker(n) {
  const box = document.getElementById('flows');
  box.textContent = 'flows: ';
  for (let i = 0; i < n; i++) {
    const cb = el('input', {type: 'checkbox', checked: true});
    cb.addEventListener('change', () => {
      state.shown[i] = cb.checked;
      for (const p of state.panels)
        if (p.def.flow) p.u.setSeries(i + 1, {show: cb.checked});
    });
    const lab = el('label');
    const sw = el('span', {className: 'swatch'});
    sw.style.background = COLORS[i % COLORS.length];
    lab.append(cb, sw, document.createTextNode('flow ' + (i + 1)));
    box.append(lab);
  }
}

function addSample(s) {
  if (s.seq <= state.lastSeq) return;  // already had it from /api/history
  state.lastSeq = s.seq;
  const r = state.recent;
  const p = r.length ? r[Math.max(0, r.length - SPAN)] : null;
  const dt = p ? s.t_s - p.t_s : 0;
  if (p && dt <= 0) return;
  state.t.push(s.t_s);
  for (const pan of state.panels)
    pan.cols.forEach((c, k) => {
      let v;
      if (c.flow !== undefined) {
        const f = s.flows[c.flow];
        v = f ? pan.def.flow(f, p && p.flows[c.flow], dt) : null;
      } else {
        v = c.extra.v(s, p, dt);
      }
      pan.data[k + 1].push(v);
    });
  if (state.t.length > MAX_POINTS) {
    state.t.shift();
    for (const pan of state.panels) for (let k = 1; k < pan.data.length; k++) pan.data[k].shift();
  }
  r.push(s);
  if (r.length > SPAN) r.shift();
  state.dirty = true;
}

function redraw() {
  if (state.paused || state.zoomed || !state.t.length) return;
  const tmax = state.t[state.t.length - 1];
  for (const pan of state.panels) {
    pan.u.setData(pan.data, false);
    // the window scrolls once full; before that the run so far fills the width
    const t0 = state.t[0];
    pan.u.setScale('x', {min: Math.max(t0, tmax - state.winS), max: Math.max(tmax, t0 + 5)});
  }
  state.dirty = false;
}

function updateStatus(text) {
  const st = document.getElementById('status');
  if (text) st.dataset.text = text;
  st.textContent = '● ' + (st.dataset.text || '') + (state.paused ? ' (paused)' : state.zoomed ? ' (zoomed)' : '');
}

function setStatus(cls, text) {
  document.getElementById('status').className = 'status ' + cls;
  updateStatus(text);
}

function resize() {
  for (const pan of state.panels)
    pan.u.setSize({width: Math.max(pan.u.root.parentNode.clientWidth - 20, 300), height: 200});
}

async function start() {
  const st = await (await fetch('/api/state')).json();
  state.run = st.run;
  document.getElementById('tool').textContent = st.run.tool;
  document.getElementById('desc').textContent = st.run.description;
  const n = st.run.flows;
  state.shown = Array.from({length: n}, () => true);
  buildFlowPicker(n);
  state.panels = PANELS.map(d => makePanel(d, n));
  document.getElementById('pause').addEventListener('click', ev => {
    state.paused = !state.paused;
    ev.target.classList.toggle('on', state.paused);
    ev.target.textContent = state.paused ? 'Resume' : 'Pause';
    updateStatus();
    redraw();
  });
  document.getElementById('win').addEventListener('change', ev => {
    state.winS = +ev.target.value;
    redraw();
  });
  window.addEventListener('resize', resize);
  const hist = await (await fetch('/api/history')).json();
  hist.samples.forEach(addSample);
  redraw();
  const es = new EventSource('/api/stream');
  es.onopen = () => setStatus('live', 'live');
  es.onmessage = ev => addSample(JSON.parse(ev.data));
  es.onerror = () => { setStatus('ended', 'run ended (the last data stays)'); es.close(); };
  // 10 redraws a second at most, whatever the sample rate
  setInterval(() => { if (state.dirty) redraw(); }, 100);
}

start().catch(e => { document.getElementById('desc').textContent = 'cannot load /api/state: ' + e; });
