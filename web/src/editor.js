// glidepath's layout editor (/editor?token=...): blocks dragged from a palette onto a
// canvas, linked by dragging from a block's output port onto a monitor or recorder,
// their properties edited on the right. The page keeps a model of the layout, writes it
// as TOML (layouts/README.md; smol-toml encodes every value), and asks the server's
// loader whether it is valid on every change: the loader is the single source of the
// rules and of the messages, so nothing here validates a value.
//
// This is the entry point (bundled by scripts/build-web.sh): it wires the page's
// controls and loads the layout. The rest lives in editor/:
//   state.js     the shared model (`state`), block ids and lookups, the request token
//   format.js    the layout format's kinds, keys, defaults
//   model.js     placing blocks, a new block's keys, changes of kind
//   toml.js      the model written as TOML and read back from it
//   edit.js      add, link, delete, select (the model changed and redrawn)
//   canvas.js    drawing the blocks and links
//   props.js     the properties panel
//   sync.js      the TOML panel, the server's check, save, download, the status line
//   gestures.js  the pointer gestures (palette, block moves, links)

import { $, state, auth } from './editor/state.js';
import { load } from './editor/toml.js';
import { deleteSelected, select } from './editor/edit.js';
import { renderAll, renderLinks } from './editor/canvas.js';
import { changed, check, download, save, setStatus, showToml } from './editor/sync.js';
import { onPaletteDown } from './editor/gestures.js';

function layoutInput(id, key) {
  const i = $(id);
  i.value = state[key];
  i.addEventListener('input', () => {
    state[key] = i.value;
    changed();
  });
}

async function start() {
  for (const item of document.querySelectorAll('#palette .palette-item')) {
    item.addEventListener('pointerdown', (e) => onPaletteDown(e, item));
  }
  $('canvas-wrap').addEventListener('pointerdown', (e) => {
    if (e.target.closest('.block, path')) return;
    if (state.selected) select(null);
  });
  document.addEventListener('keydown', (e) => {
    if (e.key !== 'Delete' && e.key !== 'Backspace') return;
    const t = e.target;
    if (t instanceof HTMLElement && (t.isContentEditable || t.closest('input, textarea, select'))) return;
    if (!state.selected) return;
    e.preventDefault();
    deleteSelected();
  });
  $('delete').addEventListener('click', deleteSelected);
  $('save').addEventListener('click', save);
  $('download').addEventListener('click', download);
  window.addEventListener('resize', renderLinks);

  let info = null;
  try {
    const r = await fetch('/api/layout', { headers: auth() });
    info = await r.json().catch(() => null);
    if (!r.ok) setStatus(false, info?.error ? String(info.error) : `could not load the layout: HTTP ${r.status}`);
  } catch (e) {
    setStatus(false, `could not load the layout: ${e.message}`);
  }
  state.path = info?.path ?? null;
  $('path').textContent = state.path ?? 'new layout';
  if (info?.save === false) $('save').title = 'this server does not save layouts: use Download';
  if (info && typeof info.toml === 'string') {
    try {
      const notes = load(info.toml);
      if (notes.length) setStatus(false, notes.join('; '));
    } catch (e) {
      setStatus(false, `could not read ${state.path ?? 'the layout'}: ${e.message}`);
      state.name = info.name ?? '';
    }
  } else {
    state.name = info?.name ?? 'layout';
  }
  layoutInput('layout-name', 'name');
  layoutInput('layout-description', 'description');
  layoutInput('layout-day-start', 'dayStart');
  renderAll();
  // Blocks placed automatically are measured now that they are drawn.
  renderLinks();
  showToml();
  check();
}

start();
