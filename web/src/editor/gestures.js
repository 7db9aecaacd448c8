// The pointer gestures (Pointer Events with pointer capture, not HTML5 drag and drop, so
// that a mouse, a pen, a finger and WebDriver's pointer actions all work): a kind dragged
// or clicked from the palette, a block moved, a link drawn from a block's out port.

import { SUBSCRIBES } from './format.js';
import { $, blockById, blockEl } from './state.js';
import { freeSpot, freshName } from './model.js';
import { SVG, curve, renderLinks } from './canvas.js';
import { addBlock, addLink, select } from './edit.js';
import { changed } from './sync.js';

// Follows one pointer from its pointerdown to its pointerup (or cancel). `onMove` runs
// once it has moved more than a few pixels; `onEnd(e, moved)` at the end.
function gesture(down, el, onMove, onEnd) {
  const id = down.pointerId;
  try {
    el.setPointerCapture(id);
  } catch {
    /* a synthetic pointer: the window listeners below still see it */
  }
  const sx = down.clientX;
  const sy = down.clientY;
  let moved = false;
  const move = (e) => {
    if (e.pointerId !== id) return;
    if (!moved && Math.hypot(e.clientX - sx, e.clientY - sy) < 4) return;
    moved = true;
    onMove(e, e.clientX - sx, e.clientY - sy);
  };
  const end = (e) => {
    if (e.pointerId !== id) return;
    window.removeEventListener('pointermove', move, true);
    window.removeEventListener('pointerup', end, true);
    window.removeEventListener('pointercancel', end, true);
    onEnd(e, moved && e.type === 'pointerup');
  };
  window.addEventListener('pointermove', move, true);
  window.addEventListener('pointerup', end, true);
  window.addEventListener('pointercancel', end, true);
}

function canvasPoint(e) {
  const r = $('canvas').getBoundingClientRect();
  return { x: e.clientX - r.left, y: e.clientY - r.top };
}

// What lies under the pointer, ignoring the element being dragged (capture redirects
// e.target to the captured element).
function under(e) {
  return document.elementFromPoint(e.clientX, e.clientY);
}

export function onPaletteDown(e, item) {
  if (e.button !== 0) return;
  e.preventDefault();
  const kind = item.dataset.kind;
  let ghost = null;
  gesture(
    e,
    item,
    (m) => {
      if (!ghost) {
        ghost = document.createElement('div');
        ghost.className = 'block ghost';
        ghost.dataset.kind = kind;
        ghost.innerHTML = `<div class="block-name"></div><div class="block-kind"></div>`;
        ghost.querySelector('.block-name').textContent = freshName(kind);
        ghost.querySelector('.block-kind').textContent = kind;
        document.body.append(ghost);
      }
      ghost.style.left = `${m.clientX}px`;
      ghost.style.top = `${m.clientY}px`;
    },
    (up, moved) => {
      ghost?.remove();
      if (!moved) {
        addBlock(kind, freeSpot(kind));
        return;
      }
      if (under(up)?.closest('#canvas-wrap')) addBlock(kind, canvasPoint(up));
    },
  );
}

export function onBlockDown(e, b) {
  if (e.button !== 0 || e.target.closest('.port.out')) return;
  e.preventDefault();
  e.stopPropagation();
  select({ block: b });
  const ox = b.x;
  const oy = b.y;
  const el = blockEl(b);
  el.classList.add('dragging');
  gesture(
    e,
    el,
    (_m, dx, dy) => {
      b.x = Math.max(0, Math.round(ox + dx));
      b.y = Math.max(0, Math.round(oy + dy));
      el.style.left = `${b.x}px`;
      el.style.top = `${b.y}px`;
      renderLinks();
    },
    (_up, moved) => {
      el.classList.remove('dragging');
      if (moved) changed();
    },
  );
}

export function onPortDown(e, b) {
  if (e.button !== 0) return;
  e.preventDefault();
  e.stopPropagation();
  const port = e.currentTarget;
  const temp = document.createElementNS(SVG, 'path');
  temp.setAttribute('class', 'link-temp');
  temp.setAttribute('marker-end', 'url(#arrow)');
  const el = blockEl(b);
  const x1 = b.x + el.offsetWidth;
  const y1 = b.y + el.offsetHeight / 2;
  let hover = null;
  const setHover = (h) => {
    if (hover === h) return;
    hover?.classList.remove('drop-target', 'drop-refused');
    hover = h;
  };
  gesture(
    e,
    port,
    (m) => {
      if (!temp.isConnected) $('link-layer').append(temp);
      const p = canvasPoint(m);
      temp.setAttribute('d', curve(x1, y1, p.x, p.y));
      const target = under(m)?.closest('#canvas .block');
      setHover(target && target !== el ? target : null);
      if (hover) hover.classList.add(SUBSCRIBES.has(hover.dataset.kind) ? 'drop-target' : 'drop-refused');
    },
    (up, moved) => {
      temp.remove();
      setHover(null);
      if (!moved) {
        select({ block: b });
        return;
      }
      const target = under(up)?.closest('#canvas .block');
      const to = target && blockById(Number(target.dataset.id));
      if (to && to !== b) addLink(b, to);
    },
  );
}
