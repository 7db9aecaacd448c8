// Changes to the layout model that draw nothing: where a block goes on the canvas, the
// name and the keys a new block gets, and what a change of kind or of source kind keeps.

import { FIELDS, KINDS, PLAYS, PUBLISHES, SUBSCRIBES, SOURCE_FIELDS, SOURCE_KINDS, DEFAULT_START, DEFAULT_END, role } from './format.js';
import { state } from './state.js';

// Canvas geometry (CSS: .block is BLOCK_W wide; its height is measured).
export const BLOCK_W = 168;
const SLOT_H = 92; // vertical step of the automatic columns
const COLUMN_X = { publisher: 40, subscriber: 420 };
const MARGIN = 40;

// ---- placing blocks ---------------------------------------------------------

function overlaps(x, y, except) {
  return state.blocks.some((b) => b !== except && Math.abs(b.x - x) < BLOCK_W + 16 && Math.abs(b.y - y) < SLOT_H - 8);
}

// The first free slot of the kind's column.
export function freeSpot(kind, except = null) {
  const x = COLUMN_X[role(kind)];
  let y = MARGIN;
  while (overlaps(x, y, except)) y += SLOT_H;
  return { x, y };
}

export function freshName(kind) {
  for (let n = 1; ; n++) {
    const name = `${kind} ${n}`;
    if (!state.blocks.some((b) => b.props.name === name)) return name;
  }
}

// The traffic window of a new block: the hour from day_start when it is a time, else
// the first hour of the memorandum's day.
function defaultWindow() {
  const t = Date.parse(state.dayStart);
  if (/[zZ]|[+-]\d\d:\d\d$/.test(state.dayStart) && Number.isFinite(t)) {
    const iso = (ms) => new Date(ms).toISOString().replace(/\.000Z$/, 'Z');
    return [iso(t), iso(t + 3600e3)];
  }
  return [DEFAULT_START, DEFAULT_END];
}

function defaultSource(kind) {
  return kind === 'player' ? { kind: 'recording', path: 'recording.bin' } : { kind: 'generated', seed: 1, density: 1.0 };
}

// Gives a block of `kind` the keys its kind needs that it lacks, so that a new block is
// valid where it can be (a monitor or recorder still needs a link).
export function fillDefaults(props) {
  const kind = props.kind;
  if (kind === 'traffic' && props.scheduled_period === undefined) props.scheduled_period = '1 s';
  if (PLAYS.includes(kind)) {
    if (!props.source || !SOURCE_KINDS[kind].includes(props.source.kind)) props.source = defaultSource(kind);
    if (kind === 'traffic' && props.source.kind === 'generated') {
      const [start, end] = defaultWindow();
      if (props.traffic_start === undefined) props.traffic_start = start;
      if (props.traffic_end === undefined) props.traffic_end = end;
    }
  }
  if (kind === 'recorder' && props.output === undefined) props.output = 'recording.bin';
  return props;
}

// ---- changing kinds ---------------------------------------------------------

// A block's kind changed: drop the keys and links the new kind has no use for, and
// give it what the new kind needs.
export function changeKind(b, kind) {
  const p = b.props;
  p.kind = kind;
  for (const f of FIELDS) if (f.kinds && !f.kinds.includes(kind)) delete p[f.key];
  if (KINDS.includes(kind)) fillDefaults(p);
  state.links = state.links.filter(
    (l) => !((l.from === b.id && !PUBLISHES.has(kind)) || (l.to === b.id && !SUBSCRIBES.has(kind))),
  );
}

export function changeSourceKind(b, kind) {
  if (kind === '') {
    delete b.props.source;
    return;
  }
  const old = b.props.source || {};
  const src = { kind };
  for (const f of SOURCE_FIELDS) if (f.for?.includes(kind) && old[f.key] !== undefined) src[f.key] = old[f.key];
  if (kind === 'generated' && src.seed === undefined) src.seed = 1;
  if (kind === 'recording' && src.path === undefined) src.path = 'recording.bin';
  b.props.source = src;
  if (b.props.kind === 'traffic' && kind === 'generated') fillDefaults(b.props);
}
