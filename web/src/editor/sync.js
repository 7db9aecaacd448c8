// The page's dealings with the server and the TOML panel: every edit rewrites the TOML
// and has the server's loader check it (POST /api/layout/check), Save writes it
// (POST /api/layout/save), Download hands it over as a file; and the status line.

import { $, state, auth } from './state.js';
import { toToml } from './toml.js';
import { renderLinks, renderSelection, sizeCanvas, updateBlockEl } from './canvas.js';
import { markInvalidInput } from './props.js';

let currentToml = '';

export function renderToml() {
  const pre = $('toml');
  pre.replaceChildren();
  const lines = currentToml.split('\n');
  if (lines[lines.length - 1] === '') lines.pop();
  lines.forEach((text, i) => {
    const s = document.createElement('span');
    s.className = 'line';
    if (state.error?.line === i + 1) s.classList.add('error-line');
    s.textContent = `${text}\n`;
    pre.append(s);
  });
  // Bring the line at fault into view (inside the panel only).
  const bad = pre.querySelector('.error-line');
  if (bad && (bad.offsetTop < pre.scrollTop || bad.offsetTop > pre.scrollTop + pre.clientHeight - 20)) {
    pre.scrollTop = Math.max(0, bad.offsetTop - pre.clientHeight / 3);
  }
}

// The TOML panel shows the model as it is now (the page's first showing).
export function showToml() {
  currentToml = toToml();
  renderToml();
}

let checkTimer = null;
let checkSeq = 0;

// Every edit: a new TOML, checked by the server 250 ms after the last change.
export function changed() {
  currentToml = toToml();
  renderToml();
  sizeCanvas();
  $('errors').classList.add('pending');
  clearTimeout(checkTimer);
  checkTimer = setTimeout(check, 250);
}

export async function check() {
  const seq = ++checkSeq;
  const text = currentToml;
  let reply;
  try {
    const r = await fetch('/api/layout/check', {
      method: 'POST',
      headers: { 'content-type': 'application/toml', ...auth() },
      body: text,
    });
    reply = await r.json().catch(() => ({ error: `check: HTTP ${r.status}` }));
    if (!r.ok && reply.ok === undefined) reply = { ok: false, error: reply.error ?? `check: HTTP ${r.status}` };
  } catch (e) {
    reply = { ok: false, error: `check: ${e.message}` };
  }
  if (seq !== checkSeq || text !== currentToml) return; // a newer edit is on its way
  showCheck(reply);
}

function showCheck(reply) {
  const box = $('errors');
  box.classList.remove('pending');
  if (reply.ok) {
    state.error = null;
    box.className = 'ok';
    box.textContent = `valid: ${reply.blocks} block${reply.blocks === 1 ? '' : 's'}, ${reply.links} link${reply.links === 1 ? '' : 's'}`;
  } else {
    const err = reply.error;
    state.error = err && typeof err === 'object' ? err : { message: String(err ?? 'invalid layout') };
    box.className = 'bad';
    box.textContent = state.error.message;
  }
  for (const b of state.blocks) updateBlockEl(b);
  renderLinks();
  renderSelection();
  markInvalidInput();
  renderToml();
}

// ---- status, save, download -------------------------------------------------

let statusTimer = null;

// The status line; a passing note (`fade`) clears itself after a few seconds.
export function setStatus(ok, text, fade = false) {
  clearTimeout(statusTimer);
  if (fade) statusTimer = setTimeout(() => setStatus(true, ''), 6000);
  const s = $('status');
  s.className = ok ? 'ok' : 'bad';
  s.textContent = text;
}

export async function save() {
  clearTimeout(checkTimer);
  const text = toToml();
  currentToml = text;
  renderToml();
  $('save').disabled = true;
  try {
    const r = await fetch('/api/layout/save', {
      method: 'POST',
      headers: { 'content-type': 'application/toml', ...auth() },
      body: text,
    });
    const reply = await r.json().catch(() => ({}));
    if (r.ok && reply.ok) {
      state.path = reply.path;
      $('path').textContent = reply.path;
      setStatus(true, `saved to ${reply.path}`);
      showCheck(reply);
    } else if (reply.error && typeof reply.error === 'object') {
      setStatus(false, reply.error.message);
      showCheck({ ok: false, error: reply.error });
    } else {
      setStatus(false, reply.error ? String(reply.error) : `save failed: HTTP ${r.status}`);
    }
  } catch (e) {
    setStatus(false, `save failed: ${e.message}`);
  } finally {
    $('save').disabled = false;
  }
}

export function download() {
  const text = toToml();
  const base = (state.name || 'layout').trim().replace(/[^\w.-]+/g, '-').replace(/^-+|-+$/g, '') || 'layout';
  const url = URL.createObjectURL(new Blob([text], { type: 'application/toml' }));
  const a = document.createElement('a');
  a.href = url;
  a.download = `${base}.toml`;
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 1000);
}
