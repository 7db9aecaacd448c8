// The properties panel: the inputs of the selected block's keys (and of its source),
// what each writes into the model, and the mark on the input the last error names.

import { FIELDS, KINDS, SECTOR_FIELDS, SOURCE_FIELDS, SOURCE_KINDS, TIMESTAMP_UNITS, usesKey } from './format.js';
import { $, state, blockById } from './state.js';
import { changeKind, changeSourceKind } from './model.js';
import { renderAll, renderLinks, updateBlockEl } from './canvas.js';
import { changed } from './sync.js';

// An input's text as the value written: empty = omitted; numbers as numbers (integers
// for `int`), anything else as typed, for the loader to judge.
function valueOf(text, type) {
  if (text === '') return undefined;
  if (type === 'int' || type === 'float') {
    const t = text.trim();
    if (type === 'int' && /^[+-]?\d+$/.test(t)) {
      const n = Number(t);
      return Number.isSafeInteger(n) ? n : BigInt(t);
    }
    const n = Number(t);
    if (t !== '' && Number.isFinite(n)) return n;
  }
  return text;
}

function shown(v, type) {
  if (v === undefined) return '';
  if (type === 'float' && typeof v === 'number' && Number.isInteger(v)) return v.toFixed(1);
  return String(v);
}

function label(text, input, cls = '') {
  const l = document.createElement('label');
  if (cls) l.className = cls;
  const s = document.createElement('span');
  s.textContent = text;
  l.append(s, input);
  return l;
}

function textInput(name, value, hint) {
  const i = document.createElement('input');
  i.type = 'text';
  i.name = name;
  i.value = value;
  i.autocomplete = 'off';
  i.spellcheck = false;
  if (hint) i.placeholder = hint;
  return i;
}

function selectInput(name, options, value) {
  const s = document.createElement('select');
  s.name = name;
  const opts = [...options];
  if (value !== '' && !opts.includes(value)) opts.push(value);
  for (const o of opts) {
    const opt = document.createElement('option');
    opt.value = o;
    opt.textContent = o === '' ? '(none)' : o;
    s.append(opt);
  }
  s.value = value;
  return s;
}

export function renderProps() {
  const box = $('props');
  box.replaceChildren();
  const b = state.selected?.block;
  if (!b) {
    const p = document.createElement('p');
    p.className = 'hint';
    p.textContent = state.selected?.link
      ? `Link ${blockById(state.selected.link.from)?.props.name} → ${blockById(state.selected.link.to)?.props.name}: Delete removes it.`
      : 'Select a block to edit its properties.';
    box.append(p);
    return;
  }
  const p = b.props;
  const kind = p.kind ?? '';
  for (const f of FIELDS) {
    if (!usesKey(f, kind) && p[f.key] === undefined) continue;
    if (f.type === 'kind') {
      const s = selectInput('kind', KINDS, kind);
      s.addEventListener('change', () => {
        changeKind(b, s.value);
        renderAll();
        changed();
      });
      box.append(label('kind', s));
    } else if (f.type === 'bool') {
      const c = document.createElement('input');
      c.type = 'checkbox';
      c.name = f.key;
      c.checked = p[f.key] === undefined ? f.def : p[f.key] === true;
      const l = label(f.key, c, 'check');
      const note = document.createElement('em');
      note.className = 'default-note';
      note.textContent = p[f.key] === undefined ? `default (${f.def})` : '';
      l.append(note);
      c.addEventListener('change', () => {
        p[f.key] = c.checked;
        note.textContent = '';
        changed();
      });
      box.append(l);
    } else if (f.type === 'source') {
      box.append(sourceFieldset(b));
    } else if (f.type === 'sector') {
      box.append(sectorFieldset(b));
    } else {
      const i = textInput(f.key, shown(p[f.key], f.type), f.hint);
      i.addEventListener('input', () => {
        const v = valueOf(i.value, f.type);
        if (v === undefined) delete p[f.key];
        else p[f.key] = v;
        if (f.key === 'name') {
          updateBlockEl(b);
          renderLinks();
        }
        changed();
      });
      box.append(label(f.key, i));
    }
  }
  markInvalidInput();
}

// The sector: each key as `lower, upper`; the loader checks the numbers (so an error
// comes back named `sector.lat`, as the run would say it).
function sectorFieldset(b) {
  const fs = document.createElement('fieldset');
  const legend = document.createElement('legend');
  legend.textContent = 'sector (through DDM; empty: every track)';
  fs.append(legend);
  for (const f of SECTOR_FIELDS) {
    const v = b.props.sector?.[f.key];
    const i = textInput(`sector.${f.key}`, Array.isArray(v) ? v.join(', ') : '', f.hint);
    i.addEventListener('input', () => {
      const text = i.value.trim();
      const sector = { ...(b.props.sector || {}) };
      if (text === '') delete sector[f.key];
      else sector[f.key] = text.split(',').map((n) => (n.trim() === '' || Number.isNaN(Number(n)) ? n.trim() : Number(n)));
      if (Object.keys(sector).length === 0) delete b.props.sector;
      else b.props.sector = sector;
      changed();
    });
    fs.append(label(f.key, i));
  }
  return fs;
}

function sourceFieldset(b) {
  const fs = document.createElement('fieldset');
  const legend = document.createElement('legend');
  legend.textContent = 'source';
  fs.append(legend);
  const src = b.props.source || {};
  const sk = src.kind === undefined ? '' : String(src.kind);
  for (const f of SOURCE_FIELDS) {
    const name = `source.${f.key}`;
    if (f.type === 'source-kind') {
      const s = selectInput(name, ['', ...(SOURCE_KINDS[b.props.kind] || ['generated', 'adsb_csv', 'recording'])], sk);
      s.addEventListener('change', () => {
        changeSourceKind(b, s.value);
        renderProps();
        changed();
      });
      fs.append(label('kind', s));
      continue;
    }
    if (!f.for.includes(sk) && src[f.key] === undefined) continue;
    const i = textInput(name, shown(src[f.key], f.type), f.hint);
    if (f.type === 'unit') {
      i.setAttribute('list', 'timestamp-units');
      if (!$('timestamp-units')) {
        const dl = document.createElement('datalist');
        dl.id = 'timestamp-units';
        for (const u of TIMESTAMP_UNITS) dl.append(Object.assign(document.createElement('option'), { value: u }));
        document.body.append(dl);
      }
    }
    i.addEventListener('input', () => {
      const v = valueOf(i.value, f.type);
      b.props.source ??= {};
      if (v === undefined) delete b.props.source[f.key];
      else b.props.source[f.key] = v;
      changed();
    });
    fs.append(label(f.key, i));
  }
  return fs;
}

// The input of the property the last error names, when its block is the selected one.
export function markInvalidInput() {
  for (const el of document.querySelectorAll('#props .invalid')) el.classList.remove('invalid');
  const err = state.error;
  const b = state.selected?.block;
  if (!err?.property || !b || err.block !== b.props.name) return;
  const input = $('props').querySelector(`[name="${CSS.escape(err.property)}"]`);
  if (input) {
    input.classList.add('invalid');
    input.closest('label')?.classList.add('invalid');
  }
}
