// glidepath's radar, pilot station and simulation control: one page whose panels
// follow the role of the token it was opened with (?token=...). Everything it draws
// is bundled: the basemap comes from the world-atlas and us-atlas packages, nothing
// is fetched from the internet. The aircraft arrive as binary frames on the
// websocket /api/stream (format in docs/web-api.md) and move smoothly between frames
// by extrapolating each one's last observed motion.

import { Deck, MapView, WebMercatorViewport } from '@deck.gl/core';
import { IconLayer, PathLayer, TextLayer } from '@deck.gl/layers';
import { feature, mesh } from 'topojson-client';
import countriesTopo from 'world-atlas/countries-50m.json';
import statesTopo from 'us-atlas/states-10m.json';
import landTopo from 'world-atlas/land-10m.json';

const $ = (id) => document.getElementById(id);
const params = new URLSearchParams(location.search);
if (params.get('token')) sessionStorage.setItem('glidepath-token', params.get('token'));
const token = sessionStorage.getItem('glidepath-token') || '';

// ---- state ----------------------------------------------------------------
let catalog = { aircraft: [] };
const planes = new Map(); // index -> {lat, lon, alt, gs, hdg, vs, t, plat, plon, pt, trail}
let visible = [];
let selected = null; // catalog index
let viewState = { longitude: -98, latitude: 39, zoom: 3.5, pitch: 0, bearing: 0 };
let ws = null;
let lastFrame = null;
const TRAIL_POINTS = 24;
const TRAIL_EVERY_MS = 2000;
const STALE_MS = 4000;

// ---- basemap --------------------------------------------------------------
const countries = feature(countriesTopo, countriesTopo.objects.countries);
const stateLines = {
  type: 'Feature',
  properties: {},
  geometry: mesh(statesTopo, statesTopo.objects.states, (a, b) => a !== b),
};
// The basemap is drawn with Canvas 2D under the WebGL canvas, and only when the view
// changes: it never moves by itself, and redrawing its ~100,000 points on every
// animation frame would cost a software WebGL renderer most of a core. Its points
// are projected to Web Mercator once; a view is then an affine map.
const baseCanvas = document.createElement('canvas');
baseCanvas.id = 'basemap';
$('map').append(baseCanvas);
const flat = new WebMercatorViewport({ width: 1, height: 1 });
function ringsOf(geometry) {
  if (!geometry) return [];
  switch (geometry.type) {
    case 'Polygon': return geometry.coordinates;
    case 'MultiPolygon': return geometry.coordinates.flat();
    case 'LineString': return [geometry.coordinates];
    case 'MultiLineString': return geometry.coordinates;
    default: return [];
  }
}
// Each ring's points, flat, with its bounding box (rings outside the view are
// skipped).
function project(rings) {
  return rings.map((ring) => {
    const out = new Float64Array(ring.length * 2);
    let [x0, y0, x1, y1] = [Infinity, Infinity, -Infinity, -Infinity];
    ring.forEach(([lon, lat], k) => {
      const [x, y] = flat.projectFlat([lon, Math.max(-85, Math.min(85, lat))]);
      out[2 * k] = x; out[2 * k + 1] = y;
      x0 = Math.min(x0, x); x1 = Math.max(x1, x); y0 = Math.min(y0, y); y1 = Math.max(y1, y);
    });
    out.box = [x0, y0, x1, y1];
    return out;
  });
}
// Zoomed out: countries at 1:50m with their borders. Zoomed in: the land at 1:10m
// (coasts, bays and islands), over which the borders are still drawn.
const countryRings = project(countries.features.flatMap((f) => ringsOf(f.geometry)));
const landRings = project(ringsOf(feature(landTopo, landTopo.objects.land).features[0]?.geometry)
  .concat(feature(landTopo, landTopo.objects.land).features.slice(1).flatMap((f) => ringsOf(f.geometry))));
const stateRings = project(ringsOf(stateLines.geometry));
const DETAIL_ZOOM = 5;
let baseDrawn = '';
function drawBasemap() {
  const map = $('map');
  const width = map.clientWidth, height = map.clientHeight;
  const key = `${width}x${height}:${viewState.longitude}:${viewState.latitude}:${viewState.zoom}`;
  if (key === baseDrawn) return;
  baseDrawn = key;
  const dpr = window.devicePixelRatio || 1;
  baseCanvas.width = Math.round(width * dpr);
  baseCanvas.height = Math.round(height * dpr);
  const vp = new WebMercatorViewport({ ...viewState, width, height });
  // The affine map from flat (world) to screen coordinates, from two points.
  const a = [viewState.longitude, viewState.latitude];
  const b = [viewState.longitude + 1, Math.max(-80, Math.min(80, viewState.latitude + 1))];
  const [wa, wb] = [flat.projectFlat(a), flat.projectFlat(b)];
  const [pa, pb] = [vp.project(a), vp.project(b)];
  const sx = (pb[0] - pa[0]) / (wb[0] - wa[0]), sy = (pb[1] - pa[1]) / (wb[1] - wa[1]);
  const ox = pa[0] - sx * wa[0], oy = pa[1] - sy * wa[1];
  const g = baseCanvas.getContext('2d');
  g.setTransform(dpr, 0, 0, dpr, 0, 0);
  g.fillStyle = '#0b1622';
  g.fillRect(0, 0, width, height);
  // The view's box in flat coordinates, to skip what is outside it.
  const fx = [(0 - ox) / sx, (width - ox) / sx], fy = [(0 - oy) / sy, (height - oy) / sy];
  const view = [Math.min(...fx), Math.min(...fy), Math.max(...fx), Math.max(...fy)];
  const trace = (rings, close) => {
    g.beginPath();
    for (const r of rings) {
      const b = r.box;
      if (b[2] < view[0] || b[0] > view[2] || b[3] < view[1] || b[1] > view[3]) continue;
      g.moveTo(r[0] * sx + ox, r[1] * sy + oy);
      for (let k = 2; k < r.length; k += 2) g.lineTo(r[k] * sx + ox, r[k + 1] * sy + oy);
      if (close) g.closePath();
    }
  };
  const detail = viewState.zoom >= DETAIL_ZOOM;
  trace(detail ? landRings : countryRings, true);
  g.fillStyle = '#162636';
  g.fill('evenodd');
  g.strokeStyle = '#546e88';
  g.lineWidth = 1;
  g.stroke();
  if (detail) {
    trace(countryRings, true);
    g.strokeStyle = '#3f566d';
    g.stroke();
  }
  trace(stateRings, false);
  g.strokeStyle = '#3c5268';
  g.lineWidth = 0.7;
  g.stroke();
}
window.addEventListener('resize', () => { baseDrawn = ''; drawBasemap(); });

// ---- the aircraft symbol: drawn once, pointing north -------------------------
function planeAtlas() {
  const c = document.createElement('canvas');
  c.width = c.height = 64;
  const g = c.getContext('2d');
  g.fillStyle = '#fff';
  g.beginPath();
  g.moveTo(32, 2); g.lineTo(37, 24); g.lineTo(62, 38); g.lineTo(62, 44); g.lineTo(37, 36);
  g.lineTo(36, 52); g.lineTo(45, 60); g.lineTo(45, 63); g.lineTo(32, 59); g.lineTo(19, 63);
  g.lineTo(19, 60); g.lineTo(28, 52); g.lineTo(27, 36); g.lineTo(2, 44); g.lineTo(2, 38);
  g.lineTo(27, 24); g.closePath(); g.fill();
  return c.toDataURL();
}
const ICON_ATLAS = planeAtlas();
const ICON_MAPPING = { plane: { x: 0, y: 0, width: 64, height: 64, mask: true } };

// ---- where each aircraft is now --------------------------------------------
function now() { return performance.now(); }
function position(p, t) {
  // Extrapolate the last observed motion (between the last two frames) for at
  // most 1.5 of its intervals: smooth motion whatever the speed factor.
  const dt = p.t - p.pt;
  if (!(dt > 0)) return [p.lon, p.lat];
  const f = Math.min((t - p.t) / dt, 1.5);
  return [p.lon + (p.lon - p.plon) * f, p.lat + (p.lat - p.plat) * f];
}
function altColor(alt) {
  if (alt < 10000) return [120, 230, 140];
  if (alt < 25000) return [240, 210, 100];
  return [110, 190, 255];
}

// ---- drawing -------------------------------------------------------------------
const deck = new Deck({
  parent: $('map'),
  // Multisampling costs a software renderer four times the pixels, for little on a
  // map of thin lines.
  deviceProps: { webgl: { antialias: false } },
  views: new MapView({ repeat: false }),
  initialViewState: viewState,
  // North up, no tilt: the basemap underneath is flat.
  controller: { dragRotate: false, touchRotate: false, keyboard: true },
  onViewStateChange: ({ viewState: v }) => {
    viewState = v;
    scheduleSubscribe();
  },
  getTooltip: ({ object }) => object && tooltip(object),
  onClick: (info) => { if (info.object) select(info.object.i); },
  onWebGLInitialized: (gl) => detectRenderer(gl),
  onBeforeRender: () => beforeDraw(),
  onAfterRender: () => afterDraw(),
  layers: [],
});

function tooltip(o) {
  const a = catalog.aircraft[o.i] || {};
  const p = planes.get(o.i);
  return `${a.callsign} ${a.type}\nFL${Math.round(p.alt / 100)}  ${Math.round(p.gs)} kt  ${Math.round(p.hdg)}°`;
}

function render() {
  const t = now();
  visible = [];
  for (const [i, p] of planes) {
    if (t - p.seen > STALE_MS) continue;
    visible.push({ i, pos: position(p, t), p });
  }
  const labels = visible.length <= 400 || viewState.zoom >= 7;
  const trails = visible.length <= 3000;
  drawBasemap();
  const layers = [];
  if (trails) {
    layers.push(new PathLayer({
      id: 'trails',
      data: visible,
      getPath: (d) => d.p.trail.concat([d.pos]),
      getColor: (d) => [...altColor(d.p.alt), 90],
      widthMinPixels: 1,
      updateTriggers: { getPath: t },
    }));
  }
  const planOf = selected !== null && catalog.aircraft[selected];
  if (planOf && planOf.waypoints.length) {
    layers.push(new PathLayer({
      id: 'plan',
      data: [{ path: planOf.waypoints.map((w) => [w[2], w[1]]) }],
      getPath: (d) => d.path,
      getColor: [255, 120, 220, 140],
      widthMinPixels: 1.5,
    }));
    layers.push(new TextLayer({
      id: 'plan-names',
      data: planOf.waypoints,
      getPosition: (w) => [w[2], w[1]],
      getText: (w) => w[0],
      getSize: 11,
      getColor: [255, 160, 230],
      getPixelOffset: [0, -10],
      fontFamily: 'monospace',
    }));
  }
  layers.push(new IconLayer({
    id: 'aircraft',
    data: visible,
    iconAtlas: ICON_ATLAS,
    iconMapping: ICON_MAPPING,
    getIcon: () => 'plane',
    getPosition: (d) => d.pos,
    getAngle: (d) => -d.p.hdg,
    getSize: (d) => (d.i === selected ? 26 : 18),
    sizeUnits: 'pixels',
    getColor: (d) => (d.i === selected ? [255, 120, 220] : altColor(d.p.alt)),
    pickable: true,
    updateTriggers: { getPosition: t, getAngle: t, getColor: [t, selected], getSize: selected },
  }));
  if (labels) {
    layers.push(new TextLayer({
      id: 'datablocks',
      data: visible,
      getPosition: (d) => d.pos,
      getText: (d) => `${(catalog.aircraft[d.i] || {}).callsign || d.i}\n${String(Math.round(d.p.alt / 100)).padStart(3, '0')} ${Math.round(d.p.gs)}`,
      getSize: 11,
      getColor: [220, 232, 244],
      getTextAnchor: 'start',
      getAlignmentBaseline: 'center',
      getPixelOffset: [12, 0],
      fontFamily: 'monospace',
      updateTriggers: { getPosition: t, getText: t },
    }));
  }
  deck.setProps({ layers });
  $('visible-count').textContent = visible.length;
  showSelected();
  showFlightList();
}

// The drawing rate adapts to what a redraw costs here: at most 25 a second, and
// never more than a quarter of the page's time, so that a slow machine (software
// WebGL, say) stays responsive to clicks and to the stream.
const stats = { renders: 0, costMs: 0, intervalMs: 40, minIntervalMs: 40, renderer: '' };
window.glidepathStats = stats;
// Software WebGL (SwiftShader, llvmpipe: a headless browser, a machine without a
// GPU) rasterises on the CPU in another process, where the page cannot see the
// cost: draw at most 10 times a second there.
function detectRenderer(gl) {
  try {
    const info = gl.getExtension('WEBGL_debug_renderer_info');
    stats.renderer = String(gl.getParameter(info ? info.UNMASKED_RENDERER_WEBGL : gl.RENDERER));
  } catch { stats.renderer = 'unknown'; }
  if (/swiftshader|llvmpipe|software/i.test(stats.renderer)) {
    stats.minIntervalMs = 100;
    stats.intervalMs = 100;
  }
}
let lastRender = 0;
function loop(ts) {
  if (ts - lastRender >= stats.intervalMs) {
    lastRender = ts;
    render();
  }
  requestAnimationFrame(loop);
}
let drawStart = 0;
function beforeDraw() { drawStart = performance.now(); }
function afterDraw() {
  const cost = performance.now() - drawStart;
  stats.renders += 1;
  stats.costMs = stats.renders === 1 ? cost : 0.8 * stats.costMs + 0.2 * cost;
  stats.intervalMs = Math.min(500, Math.max(stats.minIntervalMs, 4 * stats.costMs));
}

// ---- the stream ------------------------------------------------------------------
function onFrame(buf) {
  const v = new DataView(buf);
  if (v.getUint8(0) !== 1 || v.getUint8(1) !== 1) return;
  const rows = v.getUint32(4, true);
  const frame = Number(v.getBigUint64(8, true));
  const sim = v.getFloat64(16, true);
  const total = v.getUint32(24, true);
  const t = now();
  let o = 32;
  for (let k = 0; k < rows; k++, o += 28) {
    const i = v.getUint32(o, true);
    const lat = v.getFloat32(o + 4, true), lon = v.getFloat32(o + 8, true);
    let p = planes.get(i);
    if (!p) {
      p = { lat, lon, t, plat: lat, plon: lon, pt: t, trail: [], trailAt: 0 };
      planes.set(i, p);
    }
    if (t - p.trailAt >= TRAIL_EVERY_MS) {
      p.trail.push([p.lon, p.lat]);
      if (p.trail.length > TRAIL_POINTS) p.trail.shift();
      p.trailAt = t;
    }
    p.plat = p.lat; p.plon = p.lon; p.pt = p.t;
    p.lat = lat; p.lon = lon; p.t = t; p.seen = t;
    p.alt = v.getFloat32(o + 12, true);
    p.gs = v.getFloat32(o + 16, true);
    p.hdg = v.getFloat32(o + 20, true);
    p.vs = v.getFloat32(o + 24, true);
  }
  if (!fitted && rows > 0) fitToAircraft();
  lastFrame = frame;
  $('aircraft-count').textContent = total;
  $('frame').textContent = frame;
  $('simtime').textContent = sim.toFixed(1);
}

function onText(text) {
  let m;
  try { m = JSON.parse(text); } catch { return; }
  if (m.type === 'status' || (m.type === 'hello' && m.status)) {
    const s = m.type === 'hello' ? m.status : m;
    $('rate').textContent = s.rate_hz.toFixed(1);
    $('run-state').textContent = s.ended ? 'ended' : s.paused ? 'paused' : 'running';
  }
  if (m.type === 'ack') {
    note(`${m.callsign}: command ${m.id} ${m.outcome} at frame ${m.frame}${m.reason ? ': ' + m.reason : ''}`);
  }
  if (m.type === 'error') note(`stream: ${m.field || ''} ${m.reason}`);
  if (m.type === 'scenario') scenarioLoaded(m);
  if (m.type === 'clearance') {
    const what = `${m.instruction}${m.value !== undefined ? ' ' + m.value : ''}`;
    note(`clearance ${m.id} to ${m.callsign}: ${what} (from the ${m.from})`);
    lastClearance.set(m.callsign, m);
    showClearance();
  }
}

function connect() {
  ws = new WebSocket(`${location.protocol === 'https:' ? 'wss' : 'ws'}://${location.host}/api/stream`);
  ws.binaryType = 'arraybuffer';
  ws.onopen = () => { $('conn').textContent = 'connected'; $('conn').className = 'ok'; subscribe(); };
  ws.onclose = () => { $('conn').textContent = 'disconnected'; $('conn').className = 'bad'; setTimeout(connect, 1000); };
  ws.onmessage = (e) => (typeof e.data === 'string' ? onText(e.data) : onFrame(e.data));
}

let subscribeTimer = null;
function scheduleSubscribe() {
  clearTimeout(subscribeTimer);
  subscribeTimer = setTimeout(subscribe, 200);
}
function subscribe() {
  if (!ws || ws.readyState !== 1) return;
  const { clientWidth: width, clientHeight: height } = $('map');
  const vp = new WebMercatorViewport({ ...viewState, width, height });
  let [[w, s], [e, n]] = vp.getBounds();
  // A margin, so that aircraft entering the view are already known.
  const mx = (e - w) * 0.1, my = (n - s) * 0.1;
  const clamp = (x, lo, hi) => Math.max(lo, Math.min(hi, x));
  const bbox = (e - w) >= 300
    ? undefined
    : [clamp(w - mx, -180, 180), clamp(s - my, -90, 90), clamp(e + mx, -180, 180), clamp(n + my, -90, 90)];
  ws.send(JSON.stringify(bbox ? { type: 'subscribe', bbox, rate_hz: 10 } : { type: 'subscribe', rate_hz: 10 }));
}

// ---- panels ---------------------------------------------------------------
function note(text) {
  const li = document.createElement('li');
  li.textContent = text;
  $('event-list').prepend(li);
  while ($('event-list').children.length > 50) $('event-list').lastChild.remove();
}

// The latest clearance to each aircraft; the pilot station shows the selected one's.
const lastClearance = new Map();
function showClearance() {
  const a = selected !== null && catalog.aircraft[selected];
  const c = a && lastClearance.get(a.callsign);
  $('clearance').hidden = !c;
  if (c) $('clearance-text').textContent = `Cleared: ${c.instruction}${c.value !== undefined ? ' ' + c.value : ''}`;
}
function flyClearance() {
  const a = catalog.aircraft[selected];
  const c = a && lastClearance.get(a.callsign);
  if (!c) return;
  $('cmd-instruction').value = c.instruction;
  $('cmd-value').value = c.value !== undefined ? c.value : '';
  sendCommand();
}

// The controller's flight list: the aircraft in view, refreshed twice a second.
let listShown = 0;
function showFlightList() {
  if ($('controller').hidden || now() - listShown < 500) return;
  listShown = now();
  const rows = visible
    .map((d) => ({ d, a: catalog.aircraft[d.i] || {} }))
    .sort((x, y) => (x.a.callsign < y.a.callsign ? -1 : 1))
    .slice(0, 300);
  const body = $('flight-list').tBodies[0];
  body.replaceChildren(...rows.map(({ d, a }) => {
    const tr = document.createElement('tr');
    tr.dataset.index = d.i;
    if (d.i === selected) tr.className = 'sel';
    for (const v of [a.callsign, a.type, String(Math.round(d.p.alt / 100)).padStart(3, '0'), Math.round(d.p.gs), Math.round(d.p.hdg)]) {
      const td = document.createElement('td');
      td.textContent = v;
      tr.append(td);
    }
    tr.onclick = () => select(d.i);
    return tr;
  }));
}

async function sendClearance() {
  const a = selected !== null && catalog.aircraft[selected];
  if (!a) { show($('clr-result'), false, 'select an aircraft first'); return; }
  const body = instructionBody(a.callsign, $('clr-instruction').value, $('clr-value').value);
  const { ok, status, reply } = await post('/api/clearance', body);
  show($('clr-result'), ok, ok ? `clearance ${reply.id} sent` : `${status} ${reply.error}: ${reply.field ? reply.field + ': ' : ''}${reply.reason}`);
}

function select(i) {
  selected = i;
  const a = catalog.aircraft[i];
  if (!a) return;
  $('selected').hidden = false;
  $('sel-callsign').textContent = a.callsign;
  $('sel-type').textContent = `${a.type} ${a.type_name}`;
  $('sel-plan').textContent = 'plan: ' + a.waypoints.map((w) => w[0]).join(' → ');
  $('cmd-callsign').value = a.callsign;
  $('clr-callsign').textContent = a.callsign;
  showClearance();
}

function showSelected() {
  const p = selected !== null && planes.get(selected);
  if (!p) return;
  $('sel-heading').textContent = Math.round(p.hdg);
  $('sel-alt').textContent = Math.round(p.alt);
  $('sel-gs').textContent = Math.round(p.gs);
  $('sel-vs').textContent = Math.round(p.vs);
}

async function post(path, body) {
  const r = await fetch(path, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
    body: JSON.stringify(body),
  });
  let reply = {};
  try { reply = await r.json(); } catch { /* an empty body */ }
  return { ok: r.ok, status: r.status, reply };
}

function show(el, ok, text) {
  el.className = ok ? 'ok' : 'error';
  el.textContent = text;
}

// A command's or a clearance's body. Numbers go as numbers; anything else is sent
// as typed, and the server says why it is wrong.
function instructionBody(callsign, instruction, value) {
  const raw = value.trim();
  const body = { callsign, instruction };
  if (instruction !== 'resume') {
    body.value = instruction === 'direct' || raw === '' || isNaN(Number(raw)) ? raw : Number(raw);
  }
  return body;
}

async function sendCommand() {
  const body = instructionBody($('cmd-callsign').value, $('cmd-instruction').value, $('cmd-value').value);
  const { ok, status, reply } = await post('/api/command', body);
  if (ok) {
    show($('cmd-result'), true, reply.outcome === 'applied' ? `applied at frame ${reply.frame}` : reply.reason || reply.outcome);
  } else {
    show($('cmd-result'), false, `${status} ${reply.error || ''}: ${reply.field ? reply.field + ': ' : ''}${reply.reason || ''}`);
  }
}

async function sendControl(action) {
  const body = { action };
  if (action === 'rate') body.value = Number($('ctl-rate').value);
  if (action === 'speed') body.value = Number($('ctl-speed').value);
  if (action === 'scenario') body.value = $('ctl-scenario').value;
  const { ok, status, reply } = await post('/api/control', body);
  show($('ctl-result'), ok, ok ? `${action}: sent` : `${status} ${reply.error}: ${reply.field ? reply.field + ': ' : ''}${reply.reason}`);
}

// The first frame frames the view: all the aircraft, with a margin.
let fitted = false;
function fitToAircraft() {
  fitted = true;
  let w = 180, s = 90, e = -180, n = -90;
  for (const p of planes.values()) {
    w = Math.min(w, p.lon); e = Math.max(e, p.lon); s = Math.min(s, p.lat); n = Math.max(n, p.lat);
  }
  const pad = 0.2;
  if (e - w < pad) { w -= pad; e += pad; }
  if (n - s < pad) { s -= pad; n += pad; }
  const { clientWidth: width, clientHeight: height } = $('map');
  const vp = new WebMercatorViewport({ width, height }).fitBounds([[w, s], [e, n]], { padding: 60 });
  viewState = { longitude: vp.longitude, latitude: vp.latitude, zoom: Math.min(vp.zoom, 11), pitch: 0, bearing: 0 };
  deck.setProps({ initialViewState: viewState });
  scheduleSubscribe();
}

// The scenario's aircraft (again after the operator loads another scenario).
async function loadCatalog() {
  catalog = await (await fetch('/api/scenario')).json();
  $('scenario').textContent = catalog.scenario;
  $('scenario').title = catalog.description;
  const sel = $('cmd-callsign');
  sel.replaceChildren();
  for (const a of catalog.aircraft.slice(0, 5000)) {
    const o = document.createElement('option');
    o.value = o.textContent = a.callsign;
    sel.append(o);
  }
}

// The scenarios the operator may switch to (none: the control is hidden).
async function loadScenarios() {
  const list = await (await fetch('/api/scenarios')).json();
  $('ctl-scenario-row').hidden = list.available.length === 0;
  $('ctl-scenario').replaceChildren(...list.available.map((s) => {
    const o = document.createElement('option');
    o.value = o.textContent = s.name;
    o.title = s.description;
    o.selected = s.name === list.current;
    return o;
  }));
}

async function scenarioLoaded(m) {
  planes.clear();
  selected = null;
  fitted = false;
  lastClearance.clear();
  $('selected').hidden = true;
  await loadCatalog();
  note(`scenario ${m.scenario} loaded: ${m.aircraft} aircraft`);
}

async function start() {
  await loadCatalog();
  loadScenarios();
  const sel = $('cmd-callsign');
  sel.onchange = () => {
    const a = catalog.aircraft.find((x) => x.callsign === sel.value);
    if (a) select(a.index);
  };
  const who = await fetch('/api/whoami', { headers: token ? { authorization: `Bearer ${token}` } : {} });
  const role = who.ok ? (await who.json()).role : 'viewer (token refused)';
  $('role').textContent = role;
  const page = location.pathname.replace(/^\//, '');
  $('pilot').hidden = !((role === 'pilot' || role === 'operator') && page !== 'control');
  $('control').hidden = !(role === 'operator' && page !== 'pilot');
  $('controller').hidden = !((role === 'controller' || role === 'operator') && page !== 'pilot' && page !== 'control');
  $('clr-instruction').append(...[...$('cmd-instruction').options].map((o) => o.cloneNode(true)));
  $('clr-send').onclick = sendClearance;
  $('clearance-fly').onclick = flyClearance;
  $('cmd-send').onclick = sendCommand;
  for (const b of document.querySelectorAll('#control button')) b.onclick = () => sendControl(b.dataset.action);
  connect();
  requestAnimationFrame(loop);
}

start();
