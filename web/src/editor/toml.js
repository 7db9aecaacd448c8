// The layout as TOML: written from the model (smol-toml encodes every value) and read
// back into it, noting the keys it does not know and the links it has to drop.

import { parse, stringify } from 'smol-toml';
import { FIELDS, SOURCE_FIELDS, SECTOR_FIELDS, KNOWN_TOP, KNOWN_BLOCK, KNOWN_SOURCE, FLOAT_KEYS } from './format.js';
import { state, newId, blockById } from './state.js';
import { freeSpot } from './model.js';

// ---- TOML out ---------------------------------------------------------------

// One `key = value` written by smol-toml (which quotes keys and escapes strings).
function kv(key, value, asFloat = false) {
  return stringify({ [key]: value }, { numbersAsFloat: asFloat && typeof value === 'number' }).trim();
}

function sourceToml(src) {
  const order = [...SOURCE_FIELDS.map((f) => f.key), ...Object.keys(src).filter((k) => !KNOWN_SOURCE.has(k))];
  const parts = order.filter((k) => src[k] !== undefined).map((k) => kv(k, src[k], FLOAT_KEYS.has(k)));
  return `source = { ${parts.join(', ')} }`;
}

function sectorToml(sector) {
  const parts = SECTOR_FIELDS.filter((f) => sector[f.key] !== undefined).map((f) => kv(f.key, sector[f.key]));
  return `sector = { ${parts.join(', ')} }`;
}

function blockToml(b) {
  const lines = ['[[block]]'];
  for (const f of FIELDS) {
    const v = b.props[f.key];
    if (v === undefined) continue;
    if (f.key === 'source') lines.push(sourceToml(v));
    else if (f.key === 'sector') lines.push(sectorToml(v));
    else lines.push(kv(f.key, v, FLOAT_KEYS.has(f.key)));
  }
  lines.push(kv('position', [Math.max(0, Math.round(b.x)), Math.max(0, Math.round(b.y))]));
  return lines.join('\n');
}

export function toToml() {
  const head = [];
  if (state.name !== '') head.push(kv('name', state.name));
  if (state.description !== '') head.push(kv('description', state.description));
  if (state.dayStart !== '') head.push(kv('day_start', state.dayStart));
  const parts = [];
  if (head.length) parts.push(head.join('\n'));
  for (const b of state.blocks) parts.push(blockToml(b));
  for (const l of state.links) {
    const from = blockById(l.from)?.props.name ?? '';
    const to = blockById(l.to)?.props.name ?? '';
    parts.push(['[[link]]', kv('from', from), kv('to', to)].join('\n'));
  }
  return parts.join('\n\n') + '\n';
}

// ---- TOML in ----------------------------------------------------------------

// A TOML date-time as the RFC 3339 string the loader reads back (no zero milliseconds).
function plain(v) {
  if (v instanceof Date) return v.toISOString().replace(/\.000(?=$|Z|z|[+-])/, '');
  return v;
}

// Replaces the model's layout with the one in `text`; returns notes on what it left out.
export function load(text) {
  const doc = parse(text, { integersAsBigInt: 'asNeeded' });
  const ignored = [];
  for (const k of Object.keys(doc)) if (!KNOWN_TOP.has(k)) ignored.push(k);
  state.name = doc.name === undefined ? '' : String(plain(doc.name));
  state.description = doc.description === undefined ? '' : String(plain(doc.description));
  state.dayStart = doc.day_start === undefined ? '' : String(plain(doc.day_start));
  state.blocks = [];
  state.links = [];
  const unplaced = [];
  for (const raw of Array.isArray(doc.block) ? doc.block : []) {
    const props = {};
    for (const [k, v] of Object.entries(raw)) {
      if (!KNOWN_BLOCK.has(k)) ignored.push(`block.${k}`);
      else if (k === 'source' && v && typeof v === 'object' && !Array.isArray(v) && !(v instanceof Date)) {
        props.source = {};
        for (const [sk, sv] of Object.entries(v)) {
          if (KNOWN_SOURCE.has(sk)) props.source[sk] = plain(sv);
          else ignored.push(`source.${sk}`);
        }
      } else if (k === 'sector' && v && typeof v === 'object' && !Array.isArray(v)) {
        props.sector = {};
        for (const [sk, sv] of Object.entries(v)) {
          if (SECTOR_FIELDS.some((f) => f.key === sk)) props.sector[sk] = Array.isArray(sv) ? sv.map(Number) : sv;
          else ignored.push(`sector.${sk}`);
        }
      } else if (k !== 'position') props[k] = plain(v);
    }
    const b = { id: newId(), x: -1e6, y: -1e6, props }; // off the canvas until placed
    const p = raw.position;
    if (Array.isArray(p) && p.length === 2 && p.every((n) => Number.isFinite(Number(n)))) {
      b.x = Math.max(0, Number(p[0]));
      b.y = Math.max(0, Number(p[1]));
    } else unplaced.push(b);
    state.blocks.push(b);
  }
  // Blocks without a position: publishers in a left column, subscribers in a right one.
  for (const b of unplaced) Object.assign(b, freeSpot(b.props.kind, b));
  const dropped = [];
  for (const raw of Array.isArray(doc.link) ? doc.link : []) {
    const from = state.blocks.find((b) => b.props.name === raw.from);
    const to = state.blocks.find((b) => b.props.name === raw.to);
    if (from && to) state.links.push({ from: from.id, to: to.id });
    else dropped.push(`${raw.from} -> ${raw.to}`);
  }
  const notes = [];
  if (ignored.length) notes.push(`ignored unknown keys: ${[...new Set(ignored)].join(', ')}`);
  if (dropped.length) notes.push(`dropped links to unknown blocks: ${dropped.join(', ')}`);
  return notes;
}
