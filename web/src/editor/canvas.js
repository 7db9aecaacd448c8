// Drawing the canvas: the blocks (each keeps its element while it exists), their ports,
// the links between them as SVG curves, and which block or link is selected or at fault.

import { PUBLISHES, SUBSCRIBES } from './format.js';
import { $, state, blockById, blockEl, isSelectedBlock, isSelectedLink } from './state.js';
import { BLOCK_W } from './model.js';
import { renderProps } from './props.js';
import { select } from './edit.js';
import { onBlockDown, onPortDown } from './gestures.js';

export function renderAll() {
  renderBlocks();
  renderLinks();
  renderProps();
  renderSelection();
}

// Blocks keep their element for as long as they exist (b.el), so that a reference to
// one (a drag in progress, a test's handle) stays valid while others come and go.
function renderBlocks() {
  const canvas = $('canvas');
  const live = new Set(state.blocks.map((b) => b.el).filter(Boolean));
  for (const el of canvas.querySelectorAll('.block')) if (!live.has(el)) el.remove();
  for (const b of state.blocks) {
    if (!b.el) {
      const el = document.createElement('div');
      el.className = 'block';
      el.dataset.id = b.id;
      const title = document.createElement('div');
      title.className = 'block-name';
      const kind = document.createElement('div');
      kind.className = 'block-kind';
      el.append(title, kind);
      el.addEventListener('pointerdown', (e) => onBlockDown(e, b));
      b.el = el;
    }
    if (!b.el.isConnected) canvas.append(b.el);
    updateBlockEl(b);
  }
  sizeCanvas();
}

export function updateBlockEl(b, el = blockEl(b)) {
  if (!el) return;
  const kind = b.props.kind ?? '';
  el.dataset.name = b.props.name ?? '';
  el.dataset.kind = kind;
  el.querySelector('.block-name').textContent = b.props.name || '(unnamed)';
  el.title = `${b.props.name ?? ''} (${kind})`;
  el.querySelector('.block-kind').textContent = kind || '(no kind)';
  el.style.left = `${b.x}px`;
  el.style.top = `${b.y}px`;
  el.classList.toggle('invalid', !!state.error?.block && state.error.block === b.props.name);
  // Ports: in on the left for subscribers, out on the right for publishers.
  for (const [dir, has] of [['in', SUBSCRIBES.has(kind)], ['out', PUBLISHES.has(kind)]]) {
    let port = el.querySelector(`.port.${dir}`);
    if (has && !port) {
      port = document.createElement('span');
      port.className = `port ${dir}`;
      port.title = dir === 'out' ? 'drag onto a monitor or recorder to link' : 'receives links';
      if (dir === 'out') port.addEventListener('pointerdown', (e) => onPortDown(e, b));
      el.append(port);
    } else if (!has && port) port.remove();
  }
}

export function sizeCanvas() {
  const canvas = $('canvas');
  let w = 0;
  let h = 0;
  for (const el of canvas.querySelectorAll('.block')) {
    w = Math.max(w, el.offsetLeft + el.offsetWidth);
    h = Math.max(h, el.offsetTop + el.offsetHeight);
  }
  canvas.style.width = `${w + 240}px`;
  canvas.style.height = `${h + 240}px`;
}

export const SVG = 'http://www.w3.org/2000/svg';

// A link's ends: the out port of `from` (right middle), the in port of `to` (left middle).
function anchors(from, to) {
  const fe = blockEl(from);
  const te = blockEl(to);
  const fw = fe ? fe.offsetWidth : BLOCK_W;
  const fh = fe ? fe.offsetHeight : 50;
  const th = te ? te.offsetHeight : 50;
  return [from.x + fw + 6, from.y + fh / 2, to.x - 8, to.y + th / 2];
}

export function curve(x1, y1, x2, y2) {
  const d = Math.max(40, Math.abs(x2 - x1) / 2);
  return `M ${x1} ${y1} C ${x1 + d} ${y1}, ${x2 - d} ${y2}, ${x2} ${y2}`;
}

// The index (1-based, in file order) of the link an error names, if any.
function errorLinkIndex() {
  const m = /(?:^|:\s)link (\d+) \(/.exec(state.error?.message || '');
  return m ? Number(m[1]) : null;
}

// Links too keep their elements (l.hit under l.path) while they exist.
export function renderLinks() {
  const layer = $('link-layer');
  const bad = errorLinkIndex();
  const live = new Set();
  state.links.forEach((l, i) => {
    const from = blockById(l.from);
    const to = blockById(l.to);
    if (!from || !to) return;
    if (!l.path) {
      // A wide transparent stroke under the visible one, so that a link is easy to hit.
      l.hit = document.createElementNS(SVG, 'path');
      l.hit.setAttribute('class', 'link-hit');
      l.path = document.createElementNS(SVG, 'path');
      for (const p of [l.hit, l.path]) {
        p.addEventListener('pointerdown', (e) => {
          if (e.button !== 0) return;
          e.stopPropagation();
          e.preventDefault();
          select({ link: l });
        });
      }
    }
    live.add(l.hit).add(l.path);
    const d = curve(...anchors(from, to));
    l.hit.setAttribute('d', d);
    const sel = isSelectedLink(l);
    const invalid = bad === i + 1;
    l.path.setAttribute('class', `link${sel ? ' selected' : ''}${invalid ? ' invalid' : ''}`);
    l.path.setAttribute('d', d);
    l.path.setAttribute('data-from', from.props.name ?? '');
    l.path.setAttribute('data-to', to.props.name ?? '');
    l.path.setAttribute('marker-end', `url(#${sel ? 'arrow-selected' : invalid ? 'arrow-invalid' : 'arrow'})`);
    if (l.path.parentNode !== layer) layer.append(l.hit, l.path);
  });
  for (const el of [...layer.children]) if (!live.has(el) && !el.classList.contains('link-temp')) el.remove();
}

export function renderSelection() {
  for (const b of state.blocks) blockEl(b)?.classList.toggle('selected', isSelectedBlock(b));
  $('delete').disabled = !state.selected;
}
