// The user's edits that change the model and redraw: adding a block, linking two,
// deleting the selection, and selecting a block or a link.

import { SUBSCRIBES } from './format.js';
import { state, newId } from './state.js';
import { fillDefaults, freshName } from './model.js';
import { renderAll, renderLinks, renderSelection } from './canvas.js';
import { renderProps } from './props.js';
import { changed, setStatus } from './sync.js';

export function addBlock(kind, at) {
  const b = { id: newId(), x: Math.max(0, Math.round(at.x)), y: Math.max(0, Math.round(at.y)), props: fillDefaults({ name: freshName(kind), kind }) };
  state.blocks.push(b);
  state.selected = { block: b };
  renderAll();
  changed();
  return b;
}

export function deleteSelected() {
  const sel = state.selected;
  if (!sel) return;
  if (sel.block) {
    state.blocks = state.blocks.filter((b) => b !== sel.block);
    state.links = state.links.filter((l) => l.from !== sel.block.id && l.to !== sel.block.id);
  } else if (sel.link) {
    state.links = state.links.filter((l) => l !== sel.link);
  }
  state.selected = null;
  renderAll();
  changed();
}

export function select(sel) {
  // Delete and Backspace act on the selection only while no input has the focus.
  const active = document.activeElement;
  if (active instanceof HTMLElement && active !== document.body) active.blur();
  const same = (sel?.block && sel.block === state.selected?.block) || (sel?.link && sel.link === state.selected?.link);
  state.selected = sel;
  if (!same) renderProps();
  renderSelection();
  renderLinks();
}

export function addLink(from, to) {
  if (from === to) return;
  if (!SUBSCRIBES.has(to.props.kind)) {
    setStatus(false, `a link goes to a monitor or recorder block; "${to.props.name ?? ''}" is a ${to.props.kind} block`, true);
    return;
  }
  let link = state.links.find((l) => l.from === from.id && l.to === to.id);
  if (!link) {
    link = { from: from.id, to: to.id };
    state.links.push(link);
    changed();
  }
  state.selected = { link };
  renderAll();
}
