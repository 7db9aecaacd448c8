// The layout format (layouts/README.md) as the editor knows it: the block kinds, which
// publish and which subscribe, the block and source keys in the order they are written
// and shown, and the defaults of a new block's traffic window.

export const KINDS = ['traffic', 'monitor', 'recorder', 'player', 'external'];
export const PUBLISHES = new Set(['traffic', 'player', 'external']);
export const SUBSCRIBES = new Set(['monitor', 'recorder']);
export const PLAYS = ['traffic', 'player']; // kinds with a source and a traffic window
export const SOURCE_KINDS = { traffic: ['generated', 'adsb_csv'], player: ['recording'] };
export const TIMESTAMP_UNITS = ['auto', 's', 'ms', 'us', 'ns'];

// The block keys in the order they are written and shown. `kinds`: the kinds that use
// the key (all when absent); `hint`: the loader's default, shown as a placeholder.
export const FIELDS = [
  { key: 'name', type: 'text' },
  { key: 'kind', type: 'kind' },
  { key: 'scheduled_period', type: 'duration', hint: '1 s (required for traffic)' },
  { key: 'scheduled_delay', type: 'duration', hint: '0 s' },
  { key: 'traffic_start', type: 'time', kinds: PLAYS, hint: 'RFC 3339, e.g. 2016-03-23T07:00:00Z' },
  { key: 'traffic_end', type: 'time', kinds: PLAYS, hint: 'RFC 3339, exclusive' },
  { key: 'data_category', type: 'text', hint: 'USA' },
  { key: 'publish_track', type: 'bool', def: true },
  { key: 'publish_flight_plan', type: 'bool', def: false },
  { key: 'fast_time', type: 'bool', def: true },
  { key: 'speed', type: 'float', hint: '1.0 (unused in fast time)' },
  { key: 'host', type: 'text', hint: 'localhost' },
  { key: 'source', type: 'source', kinds: PLAYS },
  { key: 'output', type: 'text', kinds: ['recorder'], hint: 'file the recorder writes' },
  { key: 'join_within', type: 'duration', kinds: ['external'], hint: '2 min' },
  { key: 'sector', type: 'sector', kinds: ['monitor', 'recorder'] },
];
// A sector's keys: each `[lower, upper]` in degrees or feet (layouts/README.md).
export const SECTOR_FIELDS = [
  { key: 'lat', hint: 'south, north (degrees), e.g. 37, 38.5' },
  { key: 'lon', hint: 'west, east (degrees), e.g. -123, -121' },
  { key: 'alt_ft', hint: 'bottom, top (feet); empty: every altitude' },
];
export const SOURCE_FIELDS = [
  { key: 'kind', type: 'source-kind' },
  { key: 'seed', type: 'int', for: ['generated'], hint: 'integer ≥ 0' },
  { key: 'density', type: 'float', for: ['generated'], hint: '1.0' },
  { key: 'path', type: 'text', for: ['adsb_csv', 'recording'], hint: 'relative to the layout file' },
  { key: 'timestamp_unit', type: 'unit', for: ['adsb_csv'], hint: 'auto' },
];
export const KNOWN_TOP = new Set(['name', 'description', 'day_start', 'block', 'link']);
export const KNOWN_BLOCK = new Set([...FIELDS.map((f) => f.key), 'position']);
export const KNOWN_SOURCE = new Set(SOURCE_FIELDS.map((f) => f.key));

// The keys written as floats even when their value is a whole number.
export const FLOAT_KEYS = new Set(['speed', 'density']);

export const DEFAULT_START = '2016-03-23T07:00:00Z';
export const DEFAULT_END = '2016-03-23T08:00:00Z';

export const role = (kind) => (SUBSCRIBES.has(kind) ? 'subscriber' : 'publisher');
export const usesKey = (field, kind) => !field.kinds || field.kinds.includes(kind);
