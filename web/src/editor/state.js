// The editor's shared state: the layout model being edited (one `state` object, exported
// from here only), the block ids, the lookups over it, and the page's token for requests.

export const $ = (id) => document.getElementById(id);
const params = new URLSearchParams(location.search);
if (params.get('token')) sessionStorage.setItem('glidepath-token', params.get('token'));
const token = sessionStorage.getItem('glidepath-token') || '';
export const auth = () => (token ? { authorization: `Bearer ${token}` } : {});

export const state = {
  path: null,
  name: '',
  description: '',
  dayStart: '',
  blocks: [], // {id, x, y, props: {name, kind, ..., source: {...}}}
  links: [], // {from: block id, to: block id}
  selected: null, // {block} | {link}
  error: null, // the last check's error {message, line, block, property}
};
let nextId = 1;

// A new block's id.
export const newId = () => nextId++;

export const blockById = (id) => state.blocks.find((b) => b.id === id);
export const blockEl = (b) => b.el ?? null;
export const isSelectedBlock = (b) => state.selected?.block === b;
export const isSelectedLink = (l) => state.selected?.link === l;
