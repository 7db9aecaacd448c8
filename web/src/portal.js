// glidepath's run monitoring portal (glidepath run LAYOUT --web ADDR): polls the run's
// live view (GET /api/run?from=N, docs/web-api.md) twice a second and shows the state
// of the seven, the counts, latency and loss, and the messages per simulated second as
// the memorandum's Figure 4.1(b) draws them (per second, and the one-minute rolling
// average); when the run ends, the outcome and the report's tables and figures.

import uPlot from 'uplot';

const $ = (id) => document.getElementById(id);
const STATES = ['deployment', 'startup', 'initialization', 'execution', 'shutdown', 'archival', 'retirement'];
const POLL_MS = 500;
const WINDOW_S = 60; // the rolling average's window (Figure 4.1(b): one minute)

const xs = []; // simulated seconds as unix seconds (or run seconds without a day start)
const perSecond = [];
const average = [];
let rollingSum = 0;
let chart = null;
let dayStart = null;
let last = null; // {received, at: the server's elapsed_s} of the previous view
let reportShown = false;

const fmt = (n) => Number(n).toLocaleString('en-US');
const ms = (us) => (us / 1000).toFixed(us < 10000 ? 2 : 1);
function clock(t) {
  const s = Math.max(0, Math.floor(t));
  const hh = String(Math.floor(s / 3600)).padStart(2, '0');
  const mm = String(Math.floor((s % 3600) / 60)).padStart(2, '0');
  const ss = String(s % 60).padStart(2, '0');
  return `${hh}:${mm}:${ss}`;
}

function renderStates(view) {
  const done = new Map(view.states.map((s) => [s.state, s.seconds]));
  const failed = view.outcome && !view.outcome.ok;
  const list = $('states');
  if (!list.children.length) {
    for (const name of STATES) {
      const li = document.createElement('li');
      li.id = `state-${name}`;
      li.innerHTML = `<b>${name}</b><span class="t">–</span>`;
      list.append(li);
    }
  }
  for (const name of STATES) {
    const li = $(`state-${name}`);
    let cls = 'pending';
    let text = '–';
    if (done.has(name)) {
      cls = 'done';
      text = `${done.get(name).toFixed(2)} s`;
    } else if (view.state === name) {
      cls = 'current';
      text = `${view.state_s.toFixed(1)} s…`;
    } else if (failed && done.size === STATES.indexOf(name)) {
      cls = 'failed';
      text = 'failed';
    }
    li.className = cls;
    li.querySelector('.t').textContent = text;
  }
}

function renderNumbers(view) {
  $('layout').textContent = view.layout || '–';
  $('run').textContent = view.run || '–';
  $('transport').textContent = view.transport || '–';
  $('deployment').textContent = view.deployment || '–';
  $('elapsed').textContent = view.elapsed_s.toFixed(0);
  $('second').textContent = fmt(view.second);
  $('end').textContent = fmt(view.end);
  $('simtime').textContent = dayStart !== null
    ? new Date((dayStart + view.second) * 1000).toISOString().slice(0, 19).replace('T', ' ') + 'Z'
    : clock(view.second);
  $('published').textContent = fmt(view.published);
  $('received').textContent = fmt(view.received);
  if (view.outcome) {
    $('lost').textContent = fmt(view.outcome.lost);
    $('lost-note').textContent = view.outcome.ok ? 'published − received, at the end' : 'the run failed';
  }
  // The rate over the server's own clock between two views (a view that repeats the
  // last one leaves it as it was).
  if (last && view.elapsed_s > last.at) {
    const rate = (view.received - last.received) / (view.elapsed_s - last.at);
    $('rate').textContent = fmt(Math.max(0, Math.round(rate)));
  }
  if (view.outcome) $('rate').textContent = '–';
  last = { received: view.received, at: view.elapsed_s };
  const l = view.latency_us;
  $('latency').textContent = l ? `${ms(l.p50)} / ${ms(l.p90)} / ${ms(l.p99)} / ${ms(l.max)}` : '–';
  $('progress-fill').style.width = view.end ? `${(100 * view.second) / view.end}%` : '0';
  const body = $('blocks').tBodies[0];
  for (const [name, b] of Object.entries(view.blocks)) {
    let row = [...body.rows].find((r) => r.dataset.block === name);
    if (!row) {
      row = body.insertRow();
      row.dataset.block = name;
      for (let i = 0; i < 4; i++) row.insertCell();
      row.cells[0].textContent = name;
      row.cells[1].textContent = b.kind;
    }
    row.cells[2].textContent = b.kind === 'traffic' || b.kind === 'player' ? fmt(b.published) : '';
    row.cells[3].textContent = b.kind === 'monitor' || b.kind === 'recorder' ? fmt(b.received) : '';
  }
}

function makeChart() {
  const el = $('chart');
  const opts = {
    width: el.clientWidth || 800,
    height: 280,
    scales: { x: { time: dayStart !== null } },
    tzDate: (ts) => uPlot.tzDate(new Date(ts * 1000), 'Etc/UTC'),
    axes: [
      {
        stroke: '#8fa6bd', grid: { stroke: '#1c2c3d' }, ticks: { stroke: '#2b3d52' },
        space: 90, // room for an HH:MM:SS label between ticks
        // 24-hour UTC clock (HH:MM), or run seconds without a day start.
        // HH:MM:SS when the ticks are under a minute apart.
        values: (u, splits, axis, space, incr) => splits.map((v) => (dayStart !== null
          ? new Date(v * 1000).toISOString().slice(11, incr < 60 ? 19 : 16) : clock(v))),
      },
      { stroke: '#8fa6bd', grid: { stroke: '#1c2c3d' }, ticks: { stroke: '#2b3d52' }, size: 56 },
    ],
    series: [
      {},
      { label: 'messages per second', stroke: '#4a90d9', width: 1 },
      { label: 'one-minute rolling average', stroke: '#f0a030', width: 2 },
    ],
    legend: { show: false },
  };
  chart = new uPlot(opts, [xs, perSecond, average], el);
  new ResizeObserver(() => chart.setSize({ width: el.clientWidth, height: 280 })).observe(el);
}

function addSeconds(view) {
  // The server sends the closed seconds from `per_second_from`; a second already
  // held is replaced (never happens in practice: a closed second is final).
  view.per_second.forEach((n, k) => {
    const t = view.per_second_from + k;
    if (t < perSecond.length) return;
    perSecond.push(n);
    rollingSum += n;
    if (perSecond.length > WINDOW_S) rollingSum -= perSecond[perSecond.length - 1 - WINDOW_S];
    average.push(rollingSum / Math.min(perSecond.length, WINDOW_S));
    xs.push(dayStart !== null ? dayStart + t : t);
  });
  if (view.per_second.length) chart.setData([xs, perSecond, average]);
}

async function showReport(view) {
  $('outcome-section').hidden = false;
  $('outcome').textContent = view.outcome.message;
  $('outcome').className = view.outcome.ok ? 'ok' : 'bad';
  if (reportShown || !view.outcome.report) return;
  const listed = await (await fetch('/api/report')).json();
  if (!listed.written) return;
  reportShown = true;
  $('report-note').textContent = `Written to ${listed.dir}:`;
  const files = $('report-files');
  const figures = $('figures');
  for (const name of listed.files) {
    const li = document.createElement('li');
    const a = document.createElement('a');
    a.href = `/report/${encodeURIComponent(name)}`;
    a.textContent = name;
    a.target = '_blank';
    li.append(a);
    files.append(li);
    if (name.endsWith('.png')) {
      const fig = document.createElement('figure');
      const img = document.createElement('img');
      img.src = a.href;
      img.alt = name;
      const cap = document.createElement('figcaption');
      cap.textContent = name;
      fig.append(img, cap);
      figures.append(fig);
    }
  }
}

async function poll() {
  try {
    const reply = await fetch(`/api/run?from=${perSecond.length}`);
    if (!reply.ok) throw new Error((await reply.json()).error || reply.statusText);
    const view = await reply.json();
    $('conn').textContent = 'live';
    $('conn').className = 'ok';
    if (!chart) {
      dayStart = view.day_start ?? null;
      makeChart();
    }
    renderStates(view);
    renderNumbers(view);
    addSeconds(view);
    if (view.outcome) await showReport(view);
    if (view.outcome && reportShown) return; // nothing more will change
  } catch (e) {
    $('conn').textContent = `no run: ${e.message}`;
    $('conn').className = 'bad';
  }
  setTimeout(poll, POLL_MS);
}

poll();
