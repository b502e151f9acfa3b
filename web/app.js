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
               zoomed: false, winS: 30, shown: [], dirty: false, marks: [], tScale: 1};

// The payload a flow moved: what the receiver verified, or what the sender sent when the tool
// has no receiver (feroce send).
const moved = f => f.rx_bytes != null ? f.rx_bytes : f.tx_bytes;
const sw = (s, k) => s.switch ? s.switch[k] : null;
const cnps = f => state.run.tool === 'recv' ? f.cnps_tx : f.cnps_rx;

// Each panel: its title, unit, and how to get one value per flow (or per extra series).
const PANELS = [
  {id: 'tput', title: 'Throughput per flow', unit: 'Gb/s', note: 'payload verified at the receiver (sent, without one), over 5 samples; dashed: the switch bottleneck',
   flow: (f, p, dt) => p && moved(f) != null ? (moved(f) - moved(p)) * 8 / dt / 1e9 : null,
   extra: [{label: 'bottleneck', color: '#444', dash: [6, 4], v: s => (sw(s, 'rate_bps') || state.run.rate_bps) / 1e9 || null},
           {label: 'total', color: '#999', width: 2.4, v: (s, p, dt) => p ? s.flows.reduce((a, f, i) => a + (moved(f) - moved(p.flows[i])), 0) * 8 / dt / 1e9 : null}]},
  {id: 'rc', title: 'Rc: current rate', unit: 'Gb/s', note: 'DCQCN rate limiter of each sender QP',
   flow: f => f.rc_bps >= 0 ? f.rc_bps / 1e9 : null},
  {id: 'rt', title: 'Rt: target rate', unit: 'Gb/s', note: 'the rate DCQCN recovers towards',
   flow: f => f.rt_bps >= 0 ? f.rt_bps / 1e9 : null},
  {id: 'alpha', title: 'alpha', unit: 'ratio', note: 'DCQCN estimate of the share of marked packets',
   flow: f => f.alpha >= 0 ? f.alpha : null},
  {id: 'cnp', title: 'CNPs per flow', unit: 'CNP/s', note: 'received by each sender (sent, by a receiver); dashed: CE marks set by the switch',
   flow: (f, p, dt) => p ? (cnps(f) - cnps(p)) / dt : null,
   extra: [{label: 'CE marks', color: '#444', dash: [6, 4], v: (s, p, dt) => p && s.switch && p.switch ? (s.switch.marked - p.switch.marked) / dt : null}]},
  {id: 'queue', title: 'Bottleneck queue depth', unit: 'KiB', note: 'dashed: RED Kmin and Kmax',
   extra: [{label: 'queue', color: '#1f77b4', fill: 'rgba(31,119,180,0.12)', v: s => s.switch ? s.switch.q_bytes / 1024 : null},
           {label: 'Kmin', color: '#2ca02c', dash: [6, 4], v: s => sw(s, 'kmin_bytes') ? s.switch.kmin_bytes / 1024 : null},
           {label: 'Kmax', color: '#d62728', dash: [6, 4], v: s => sw(s, 'kmax_bytes') ? s.switch.kmax_bytes / 1024 : null}]},
  {id: 'retx', title: 'Retransmissions per flow', unit: 'packets/s', note: 'Go-Back-N resends of each sender QP',
   flow: (f, p, dt) => p ? (f.retx_pkts - p.retx_pkts) / dt : null},
  {id: 'rtt', title: 'PSN-to-ACK latency', unit: 'ms', note: 'mean of the ACKs of the last 250 ms',
   flow: (f, p) => p && f.rtt_count > p.rtt_count ? (f.rtt_sum_ns - p.rtt_sum_ns) / (f.rtt_count - p.rtt_count) / 1e6 : null},
  // Event building: `per` is one or more series per builder (b, its value 5 samples before, dt).
  // over 4 samples (200 ms): the demo's builders report every 100 ms, and an odd span would
  // alternate between two and three of their reports
  {id: 'eb_rate', eb: true, span: 4, title: 'Built events per builder', unit: 'events/s', note: 'complete events each builder recorded, over 200 ms; grey: the total',
   per: [{v: (b, p, dt) => p && b.built != null && p.built != null ? (b.built - p.built) / dt : null}],
   extra: [{label: 'total', color: '#999', width: 2.4, v: (s, p, dt) => p && p.builders ? s.builders.reduce((a, b, i) => a + (b.built - p.builders[i].built), 0) / dt : null}]},
  {id: 'eb_lat', eb: true, title: 'Building latency', unit: 'ms', note: 'first fragment to recorded: p50 solid, p99 dashed',
   per: [{suffix: ' p50', v: b => b.latency_p50_s != null ? b.latency_p50_s * 1e3 : null},
         {suffix: ' p99', dash: [6, 4], v: b => b.latency_p99_s != null ? b.latency_p99_s * 1e3 : null}]},
  {id: 'eb_loss', eb: true, title: 'Incomplete, lost and busy events', unit: 'events', note: 'since the start: incomplete solid, lost dotted; dashed: throttled by the front-ends (busy)',
   per: [{suffix: ' incomplete', v: b => b.incomplete},
         {suffix: ' lost', dash: [2, 3], v: b => b.lost}],
   extra: [{label: 'busy', color: '#444', dash: [6, 4], v: s => s.busy_events != null ? s.busy_events : null}]},
  {id: 'eb_slots', eb: true, title: 'Builder slot occupancy', unit: 'slots', note: 'event slots in use; dashed: the ring',
   per: [{v: b => b.slots_used}],
   extra: [{label: 'ring', color: '#444', dash: [6, 4], v: s => s.builders && s.builders[0] ? s.builders[0].slots : null}]},
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

function makePanel(def, nFlows, nBuilders) {
  const box = el('section', {className: 'panel'});
  box.append(el('h2', {}, def.title + ' (' + def.unit + ')'), el('div', {className: 'note'}, def.note));
  document.getElementById('panels').append(box);
  const tu = state.tScale === 1 ? ' s' : ' ms';
  const series = [{label: 'time', value: (u, v) => v == null ? '–' : v.toFixed(2) + tu}];
  const cols = [];
  if (def.flow)
    for (let i = 0; i < nFlows; i++) {
      series.push({label: flowName(i), stroke: COLORS[i % COLORS.length], width: 1.6,
                   value: (u, v) => fmtNum(v), show: state.shown[i]});
      cols.push({flow: i});
    }
  for (let i = 0; def.per && i < nBuilders; i++)
    for (const per of def.per) {
      series.push({label: builderName(i) + (per.suffix || ''), stroke: COLORS[i % COLORS.length],
                   width: 1.6, dash: per.dash, value: (u, v) => fmtNum(v), show: state.shown[i]});
      cols.push({builder: i, per});
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
    axes: [{label: state.tScale === 1 ? 'time (s)' : 'simulated time (ms)', stroke: '#3c4556', grid: {stroke: '#eceff3'}},
           {label: def.unit, stroke: '#3c4556', grid: {stroke: '#eceff3'}, size: 60}],
    cursor: {sync: {key: 'feroce'}, drag: {x: true, y: false}},
    legend: {live: true},
    hooks: {setSelect: [u => { if (u.select.width > 2) { state.zoomed = true; updateStatus(); } }],
            draw: [drawMarks]},
  };
  const data = [state.t];
  for (let k = 0; k < cols.length; k++) data.push([]);
  const u = new uPlot(opts, data, box);
  u.over.addEventListener('dblclick', () => { state.zoomed = false; updateStatus(); redraw(); });
  return {def, u, cols, data};
}

// A CC parameter change (--web-write): a dashed vertical line on every chart, its text on top.
function drawMarks(u) {
  const ctx = u.ctx;
  ctx.save();
  ctx.strokeStyle = '#e08214';
  ctx.fillStyle = '#b35806';
  ctx.setLineDash([4, 3]);
  ctx.lineWidth = 1.5 * devicePixelRatio;
  ctx.font = (10 * devicePixelRatio) + 'px system-ui, sans-serif';
  for (const m of state.marks) {
    const x = u.valToPos(m.t_s * state.tScale, 'x', true);
    if (x < u.bbox.left || x > u.bbox.left + u.bbox.width) continue;
    ctx.beginPath();
    ctx.moveTo(x, u.bbox.top);
    ctx.lineTo(x, u.bbox.top + u.bbox.height);
    ctx.stroke();
    ctx.fillText((m.flow ? 'flow ' + m.flow + ': ' : '') + m.text, x + 3, u.bbox.top + 10 * devicePixelRatio);
  }
  ctx.restore();
}

function addMarks(list) {
  state.marks.push(...list);
  state.dirty = true;
  for (const pan of state.panels) pan.u.redraw(false);
}

// "flow 1".. or, for the switch, "port 0"..; builders "b0"..
const flowName = i => state.run.flow_label === 'port' ? 'port ' + i : 'flow ' + (i + 1);
const builderName = i => 'b' + ((state.run.first_builder || 0) + i);

// The check boxes: flows, or builders when the run has no flows (event building).
function buildFlowPicker(n, byBuilder) {
  const box = document.getElementById('flows');
  box.textContent = byBuilder ? 'builders: ' : state.run.flow_label === 'port' ? 'ports: ' : 'flows: ';
  for (let i = 0; i < n; i++) {
    const cb = el('input', {type: 'checkbox', checked: true});
    cb.addEventListener('change', () => {
      state.shown[i] = cb.checked;
      for (const p of state.panels)
        p.cols.forEach((c, k) => {
          if ((byBuilder ? c.builder : c.flow) === i) p.u.setSeries(k + 1, {show: cb.checked});
        });
    });
    const lab = el('label');
    const sw = el('span', {className: 'swatch'});
    sw.style.background = COLORS[i % COLORS.length];
    lab.append(cb, sw, document.createTextNode(byBuilder ? builderName(i) : flowName(i)));
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
  state.t.push(s.t_s * state.tScale);
  for (const pan of state.panels) {
    const sp = pan.def.span && r.length ? r[Math.max(0, r.length - pan.def.span)] : p;
    const sdt = sp ? s.t_s - sp.t_s : 0;
    pan.cols.forEach((c, k) => {
      let v;
      if (c.flow !== undefined) {
        const f = s.flows[c.flow];
        v = f ? pan.def.flow(f, p && p.flows[c.flow], dt) : null;
      } else if (c.builder !== undefined) {
        const b = s.builders && s.builders[c.builder];
        v = b ? c.per.v(b, sp && sp.builders && sp.builders[c.builder], sdt) : null;
      } else {
        v = c.extra.v(s, sp, sdt);
      }
      pan.data[k + 1].push(v);
    });
  }
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
    if (state.tScale !== 1)  // a simulation is short: all of it, as it grows
      pan.u.setScale('x', {min: t0, max: Math.max(tmax, t0 + 1e-3)});
    else
      pan.u.setScale('x', {min: Math.max(t0, tmax - state.winS), max: Math.max(tmax, t0 + 5)});
  }
  state.dirty = false;
  document.getElementById('count').textContent = state.lastSeq + ' samples';
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

// The CC parameters of each QP; with --web-write a form per QP sets them (POST /api/params).
async function buildParams() {
  const p = await (await fetch('/api/params')).json();
  const box = document.getElementById('params');
  if (!p.qps.length || !p.qps[0].params.length) return;
  box.hidden = false;
  box.querySelector('h2').textContent = 'CC parameters (' + p.qps[0].cc + ')' + (p.writable ? '' : ' — read-only (start with --web-write to change them)');
  const table = box.querySelector('table');
  table.textContent = '';
  const head = el('tr');
  head.append(el('th', {}, 'parameter'), el('th', {}, 'unit'), el('th', {}, 'default'));
  p.qps.forEach(q => head.append(el('th', {}, 'flow ' + q.flow)));
  table.append(head);
  p.qps[0].params.forEach((d, k) => {
    const tr = el('tr');
    tr.append(el('td', {}, d.name), el('td', {}, d.unit), el('td', {}, String(d.default)));
    p.qps.forEach(q => {
      const td = el('td');
      const v = q.params[k].value;
      if (p.writable) {
        const inp = el('input', {value: String(v), size: 8});
        inp.addEventListener('change', () => setParam(q.flow, d.name, inp));
        td.append(inp);
      } else {
        td.textContent = String(v);
      }
      if (v !== d.default) td.className = 'changed';
      tr.append(td);
    });
    table.append(tr);
  });
}

async function setParam(flow, name, inp) {
  const msg = document.getElementById('params-msg');
  const body = new URLSearchParams({flow: String(flow), set: name + '=' + inp.value});
  const r = await fetch('/api/params', {method: 'POST', body});
  msg.textContent = r.ok ? 'flow ' + flow + ': ' + name + ' = ' + inp.value : 'refused: ' + (await r.text());
  msg.className = r.ok ? 'ok' : 'err';
  buildParams();
}

async function start() {
  const st = await (await fetch('/api/state')).json();
  state.run = st.run;
  if (st.run.clock === 'simulated') {
    state.tScale = 1e3;
    document.getElementById('winbox').hidden = true;
  }
  document.getElementById('tool').textContent = st.run.tool;
  document.getElementById('desc').textContent = st.run.description;
  const n = st.run.flows, nb = st.run.builders || 0;
  const byBuilder = n === 0 && nb > 0;
  state.shown = Array.from({length: byBuilder ? nb : n}, () => true);
  buildFlowPicker(byBuilder ? nb : n, byBuilder);
  // only the panels this tool has data for: no switch, no queue; no CC, no Rc/Rt/alpha
  const skip = new Set();
  if (st.sample && !st.sample.switch) skip.add('queue');
  if (st.run.cc === 'none') ['rc', 'rt', 'alpha'].forEach(k => skip.add(k));
  if (st.run.counters === false || st.run.tool === 'recv') ['retx', 'rtt'].forEach(k => skip.add(k));
  if (st.run.counters === false && st.run.tool !== 'switch') skip.add('cnp');
  // event building: its panels only with builders; a run of builders only has no flow panels;
  // the event manager sees no built events or latencies
  PANELS.filter(d => d.eb ? !nb : byBuilder).forEach(d => skip.add(d.id));
  if (st.run.tool === 'evm') ['eb_rate', 'eb_lat'].forEach(k => skip.add(k));
  state.panels = PANELS.filter(d => !skip.has(d.id)).map(d => makePanel(d, n, nb));
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
  buildParams();
  const hist = await (await fetch('/api/history')).json();
  hist.samples.forEach(addSample);
  addMarks(hist.marks || []);
  redraw();
  const es = new EventSource('/api/stream');
  es.onopen = () => setStatus('live', 'live');
  es.onmessage = ev => addSample(JSON.parse(ev.data));
  es.addEventListener('mark', ev => { addMarks(JSON.parse(ev.data)); buildParams(); });
  es.onerror = () => { setStatus('ended', 'run ended (the last data stays)'); es.close(); };
  // 10 redraws a second at most, whatever the sample rate
  setInterval(() => { if (state.dirty) redraw(); }, 100);
}

// A script error is shown on the page, not only in the browser's console.
const showError = m => { document.getElementById('status').title = m; setStatus('ended', 'page error: ' + m); };
window.addEventListener('error', e => showError(e.message));
window.addEventListener('unhandledrejection', e => showError(String(e.reason)));

start().catch(e => { document.getElementById('desc').textContent = 'cannot load /api/state: ' + e; });
